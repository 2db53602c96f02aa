#ifndef TF_TEST_SHIM_H
#define TF_TEST_SHIM_H

// The tests' own fixed-argument wrappers of variadic libvips calls: making fixtures and measuring
// pixels. Nothing in the product links them.

// Declared only where THUMBFRAME_IMAGING is (the test targets), as the C modules it wraps are.
#ifdef THUMBFRAME_IMAGING

#include <vips/vips.h>
#include "tf_shim.h"
#include <lcms2.h>

/// Opens an image from a file for its header only.
VipsImage *tf_image_new_from_file(const char *path);

/// Writes an image to a file whose name may carry libvips save options, e.g. "x.jpg[interlace]".
int tf_write_to_file(VipsImage *in, const char *path_with_options);

/// Writes an image as a file of a given format, keeping its metadata (unlike tf_save_buffer), so
/// a fixture can carry its orientation tag.
int tf_save_file(VipsImage *in, const char *path, TFFormat format, int quality);

/// vips_icc_transform, relative colorimetric: makes and checks colour fixtures.
int tf_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile, int embedded, int depth);

/// CIEDE2000 colour difference per pixel of two images of one size, each first taken to CIELAB
/// from its interpretation.
int tf_delta_e00(VipsImage *a, VipsImage *b, VipsImage **out);

/// Casts to double-precision bands (to read measurements).
int tf_cast_double(VipsImage *in, VipsImage **out);

/// libvips' vips_resize by `scale` with Lanczos3 and a reducing gap.
int tf_vips_resize(VipsImage *in, VipsImage **out, double scale, double gap);

/// The image with another interpretation (its pixels untouched).
int tf_interpreted_as(VipsImage *in, VipsImage **out, VipsInterpretation interpretation);

/// A grey image as three equal sRGB bands.
int tf_grey_to_srgb(VipsImage *in, VipsImage **out);

/// An ICC v4 profile (RGB, or CMYK with `cmyk`) whose only table is A2B0, perceptual, as in
/// XYB JPEGs and some CMYK profiles: the RGB device is sRGB with red and blue swapped, the CMYK
/// device naive (R = (1 - C)(1 - K)). Made with lcms; `data` is freed with g_free().
int tf_test_lut_profile(int cmyk, void **data, size_t *length);

/// The sRGB image in the device space of `tf_test_lut_profile(cmyk)`, the profile embedded:
/// converted with that profile it is the sRGB image again.
int tf_test_device_image(VipsImage *srgb, int cmyk, const void *profile, size_t length, VipsImage **out);

/// Writes a 10-bit HEIC (or, with `av1`, AVIF) through libheif's encoder from a 16-bit RGB PNG
/// of BT.2020 code values, tagged with an nclx box (BT.2020 primaries and matrix, full range,
/// `transfer` 16 PQ or 18 HLG), which heif-enc 1.15 leaves out of a HEIC (libheif's macOS workaround).
int tf_test_write_heif_hdr(const char *png16, const char *path, int transfer, int av1);

#endif // THUMBFRAME_IMAGING
#endif
