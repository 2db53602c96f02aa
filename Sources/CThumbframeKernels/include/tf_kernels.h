#ifndef TF_KERNELS_H
#define TF_KERNELS_H

// Resampling kernels on plain 8-bit pixel buffers: no libvips, no allocation the caller does not
// see. CThumbframeShim wraps them into libvips images (tf_resize_exact's fast horizontal pass:
// transpose, Lanczos3 down the columns, transpose back). scripts/benchmarks/kernel-speed measures them
// against libvips' reduceh.

#include <stddef.h>
#include <stdint.h>

/// Copies `width` x `height` pixels of `bands` bytes (rows of width * bands bytes, no padding)
/// into `out` as `height` x `width` (x and y swapped), in 32 x 32 blocks.
void tfk_transpose(const uint8_t *in, uint8_t *out, int width, int height, int bands);

/// Lanczos3 down the columns of `rows_in` rows of `line` bytes each, reducing by `scale` (> 0,
/// input rows per output row) into exactly `rows_out` rows of `out`: the output rows span
/// rows_out * scale input rows centred on the input (as libvips places them), the weights
/// normalised and held in 14 bits (exact 32-bit sums, two rows at a time; SSE2 where there is
/// SSE2), the edge row repeated past the edge. Returns 0, or -1 when it cannot allocate its
/// scratch rows.
int tfk_lanczos3_rows(const uint8_t *in, size_t line, int rows_in, uint8_t *out, int rows_out, double scale);

/// Output rows `out_first` … `out_first + out_count - 1` of tfk_lanczos3_rows(…, rows_in, …,
/// rows_out, scale), exactly those bytes, from a window of the input: `in` is input row
/// `in_first`, rows `stride` bytes apart, `line` bytes of each taken (a band of columns); the
/// rows read are those tfk_lanczos3_span names. Output rows `out_stride` bytes apart.
int tfk_lanczos3_window(const uint8_t *in, size_t stride, size_t line, int rows_in, int in_first, uint8_t *out, size_t out_stride,
                        int rows_out, int out_first, int out_count, double scale);

/// tfk_lanczos3_window written transposed: output row r's pixels (`line` / `bands` of them,
/// `bands` bytes each) become column r of `out`, whose rows (one per input column) are
/// `out_stride` bytes apart. The same bytes as the window followed by tfk_transpose, without
/// holding the untransposed rows: they go through an 8-row strip in the cache. -1 when it cannot
/// allocate its scratch, or `line` is not whole pixels.
int tfk_lanczos3_window_transposed(const uint8_t *in, size_t stride, size_t line, int rows_in, int in_first, uint8_t *out,
                                   size_t out_stride, int rows_out, int out_first, int out_count, double scale, int bands);

/// The input rows [*from, *to) that output rows `first` … `first + count - 1` of a Lanczos3
/// reduction of rows_in to rows_out rows by `scale` read (clipped to the image).
void tfk_lanczos3_span(int rows_in, int rows_out, double scale, int first, int count, int *from, int *to);

/// HDR transfer functions `tfk_tonemap_rgb48` decodes.
typedef enum {
    TFK_TRANSFER_PQ = 1,  ///< SMPTE ST 2084
    TFK_TRANSFER_HLG = 2, ///< ARIB STD-B67
} TFKTransfer;

/// Turns `width` x `height` pixels of non-linear BT.2020 R'G'B' in 16 bits (rows of `stride`
/// bytes, 3 values per pixel, native byte order) into 8-bit sRGB in `out` (rows of width * 3
/// bytes): the transfer's EOTF (PQ absolute; HLG through its OOTF for a 1000 cd/m² display),
/// BT.2020 to BT.709 primaries in linear light, HDR reference white (203 cd/m², BT.2408) to SDR
/// white, highlights above 0.75 of it rolled off smoothly (slope 1 at the knee, approaching
/// white) on the largest channel so hues keep, then the sRGB curve.
void tfk_tonemap_rgb48(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, uint8_t *out);

/// tfk_tonemap_rgb48, also writing each pixel's log2 of what the roll-off took away, in 1/4096
/// stops (`gain`, width * height values, 0 where nothing was, at most 16 stops): the HDR
/// picture in linear BT.709 relative to SDR white is the SDR one's linear light times
/// 2^(gain / 4096), the gain map of ISO 21496-1.
void tfk_tonemap_rgb48_gain(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, uint8_t *out, uint16_t *gain);

/// The primaries of an HDR signal (ITU-T H.273 colour primaries 9, 12 and 11, 1).
typedef enum {
    TFK_PRIMARIES_BT2020 = 0, ///< BT.2020 and BT.2100 (the default where a file says nothing)
    TFK_PRIMARIES_P3 = 1,     ///< Display P3 (SMPTE EG 432-1, D65; DCI-P3's primaries are taken with D65 white)
    TFK_PRIMARIES_BT709 = 2,  ///< BT.709 and sRGB
} TFKPrimaries;

/// The primaries of an H.273 `colour_primaries` code: 1 BT.709, 11 or 12 P3, anything else BT.2020.
TFKPrimaries tfk_primaries(int code);

/// tfk_tonemap_rgb48_gain for a signal of `primaries` (BT.2020 for the others), converted to
/// BT.709 in linear light before the roll-off.
void tfk_tonemap_rgb48_gain_from(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, TFKPrimaries primaries,
                                 uint8_t *out, uint16_t *gain);

/// tfk_tonemap_rgb48's mapping for a video's frames, about ten times faster: the output curve and
/// HLG's OOTF gain through tables of 65536 steps (a value within one level of the exact one).
void tfk_tonemap_rgb48_frames(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, uint8_t *out);

#endif
