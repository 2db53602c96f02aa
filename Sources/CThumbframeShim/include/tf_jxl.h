#ifndef TF_JXL_H
#define TF_JXL_H

// JPEG XL through libjxl's own decoder: the colour encoding libvips 8.14 does not act on (PQ,
// HLG), and the decode of such a picture in its own signal, tone-mapped to 8-bit sRGB as HEIF
// and video are. Declared to ThumbframeImaging alone (THUMBFRAME_IMAGING), as tf_shim.h is.
#ifdef THUMBFRAME_IMAGING

#include <stddef.h>
#include <stdint.h>

#include <vips/vips.h>

#include "tf_hdr.h"

/// The picture's transfer as ITU-T H.273 numbers it (16 PQ, 18 HLG; 0 when the file describes
/// its colour by an ICC profile only), read from its header: 0, or -1 when libjxl cannot.
int tf_jxl_transfer(const void *data, size_t length, int *transfer);

/// Decodes a PQ or HLG (`transfer`) picture at 16 bits in its own signal, oriented, resizes it
/// (Lanczos3) to `width` x `height` and tone-maps it to 8-bit sRGB: `out`, with its gain map
/// when `gain` is set. More than `max_pixels` is refused before the decode. 0, or -1 with a
/// one-line reason in `error`.
int tf_jxl_decode_hdr(const void *data, size_t length, int transfer, int width, int height, long long max_pixels, int gain, TFHdrBox *out,
                      char *error, size_t error_length);

/// Decodes an SDR picture whole, oriented, at its own depth (8 or 16 bits a sample; float
/// samples as 16 bits), grey or RGB with alpha where it has one, into `*out` (in memory), the
/// ICC profile of its pixels attached. libvips 8.14's loader feeds libjxl the file in pieces and
/// fails on real files ("Invalid context map"); here libjxl has the whole file as its input.
/// More than `max_pixels` is refused before the decode. 0, or -1 with a one-line reason.
int tf_jxl_decode_image(const void *data, size_t length, long long max_pixels, VipsImage **out, char *error, size_t error_length);

#endif // THUMBFRAME_IMAGING
#endif
