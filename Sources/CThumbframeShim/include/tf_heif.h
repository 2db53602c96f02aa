#ifndef TF_HEIF_H
#define TF_HEIF_H

// HEIF/AVIF through libheif's own API: the facts of the primary picture libvips 8.14 does not
// read (its nclx colour, its bit depth, an HDR gain map beside it), and the decode of an HDR
// (PQ or HLG) picture at its own depth, tone-mapped to 8-bit sRGB (tfk_tonemap_rgb48, as video
// posters are). Declared to ThumbframeImaging alone (THUMBFRAME_IMAGING), as tf_shim.h is.
#ifdef THUMBFRAME_IMAGING

#include <stddef.h>
#include <stdint.h>

#include "tf_hdr.h"

/// The primary picture's colour facts.
typedef struct {
    /// An nclx colour box describes the picture (else its colour is its ICC profile's, or none).
    int nclx;
    /// ITU-T H.273 code points from the nclx box: 16 PQ, 18 HLG; 9 BT.2020.
    int transfer;
    int primaries;
    /// Bits per luma sample as coded (8, 10, 12).
    int bits;
    /// An auxiliary image of Apple's HDR gain map type is attached.
    int gain_map;
    /// The picture's size as decoded (its transformations applied).
    int width;
    int height;
} TFHeifFacts;

/// Reads the primary picture's facts from `length` bytes at `data`: 0, or -1 when libheif
/// cannot read the container (the caller's loader says why).
int tf_heif_facts(const void *data, size_t length, TFHeifFacts *facts);

/// Decodes the primary picture of an HDR file (`transfer` 16 PQ or 18 HLG) at its own bit
/// depth, resizes it (Lanczos3, in its non-linear BT.2020 signal as a video's poster is) to
/// `width` x `height`, and tone-maps it to 8-bit sRGB: `out`, with its gain map when `gain` is
/// set. Pictures of more than `max_pixels` are refused before they are decoded. 0, or -1 with a
/// one-line reason in `error`.
int tf_heif_decode_hdr(const void *data, size_t length, int transfer, int width, int height, long long max_pixels, int gain, TFHdrBox *out,
                       char *error, size_t error_length);

/// Decodes the primary picture's Apple HDR gain map (its `urn:com:apple:photo:2020:aux:hdrgainmap`
/// auxiliary image, turned as the picture is) as 8-bit grey: `*map` (`*width` * `*height` bytes,
/// freed with free()), code values in Rec. 709's curve as Apple stores them. More than
/// `max_pixels` is refused. 0, or -1 with a one-line reason in `error` (none: no such image).
int tf_heif_gain_map(const void *data, size_t length, long long max_pixels, uint8_t **map, int *width, int *height, char *error,
                     size_t error_length);

#endif // THUMBFRAME_IMAGING
#endif
