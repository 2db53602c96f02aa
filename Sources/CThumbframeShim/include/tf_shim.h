#ifndef TF_SHIM_H
#define TF_SHIM_H

// What Swift cannot call in libvips and libexif, as fixed-argument functions: variadic
// `vips_*(..., NULL)` operations, VIPS_INIT, GObject signals and callbacks (the decode guard, the
// deadline-bound JPEG source), C11 atomics, and libexif's macros and struct fields. Only
// ThumbframeImaging imports it (the tests' own C is CThumbframeTestShim). The resampling kernels
// are CThumbframeKernels'; tf_resize_exact wraps them.
//
// Functions returning `int` status return 0 on success and -1 on failure (libvips' convention),
// the reason then in libvips' error buffer (vips_error_buffer_copy()); the others say what they
// return.

// Declared to ThumbframeImaging alone, as CVips and CExif are (THUMBFRAME_IMAGING).
#ifdef THUMBFRAME_IMAGING

#include <stddef.h>
#include <vips/vips.h>
#include <libexif/exif-data.h>
#include "tf_hdr.h"

/// Output formats the shim can encode.
typedef enum {
    TF_FORMAT_JPEG = 0,
    TF_FORMAT_WEBP = 1,
    TF_FORMAT_AVIF = 2,
    TF_FORMAT_PNG = 3, ///< fixtures only (CThumbframeTestShim's tf_save_file)
} TFFormat;

/// The version this binary was built as (`-Xcc -DTF_BUILD_VERSION=0.5.0+3.gabc1234`, which
/// scripts/install and scripts/package pass between releases), or NULL when none was given.
const char *tf_build_version(void);

/// Starts libvips once per process for batch work: operation cache off, untrusted loaders blocked.
int tf_vips_start(const char *argv0);

/// Opens an image from memory for its header only (pixels are decoded lazily, never here).
/// fail_on: a VipsFailOn value applied when the pixels are later read.
VipsImage *tf_image_new_from_buffer(const void *data, size_t length, int fail_on);

/// As tf_image_new_from_buffer, in libvips' calling convention.
int tf_image_from_buffer(const void *data, size_t length, VipsImage **out, int fail_on);

/// The size of one page of a multi-page image (TIFF, HEIF, ...), from its header.
int tf_page_size(const void *data, size_t length, int page, int *width, int *height);

/// Decodes `data` once to exactly width x height (display orientation), auto-rotated by its
/// orientation tag, with the loader's shrink-on-load or the pyramid level that covers the box.
int tf_thumbnail_buffer(const void *data, size_t length, VipsImage **out, int width, int height, int fail_on);

/// Decodes a JPEG at 1/shrink of its size (libjpeg's DCT scaling; shrink is 1, 2, 4 or 8),
/// sequentially and without rotating: the shrink-on-load step, chosen by the caller.
int tf_jpeg_load_shrunk(const void *data, size_t length, VipsImage **out, int shrink, int fail_on);

/// `tf_jpeg_load_shrunk` for a progressive JPEG, with a deadline the decoder itself obeys.
/// libjpeg decodes every scan of a progressive file inside its first row request, where no
/// libvips callback runs; here libjpeg reads its input from a custom source that hands out at
/// most 1 KiB at a time and ends the input (an early EOI: the decode then fails as truncated)
/// once `timeout_seconds` (from this call; 0: none) have passed or `*stop` became non-zero.
/// `data` must stay valid while the image is computed.
int tf_jpeg_load_shrunk_deadline(const void *data, size_t length, VipsImage **out, int shrink, int fail_on, double timeout_seconds,
                                 const int *stop);

/// Resizes to exactly width x height with Lanczos3 (alpha premultiplied): stretched by at most
/// a rounding pixel for a fit, or scaled to cover and cropped at the centre with `crop`.
/// An 8-bit image in memory without alpha, reduced by at most 16 on each axis, takes the exact
/// integer Lanczos3 of CThumbframeKernels (down the columns, then along the rows through
/// tf_transpose) with libvips' kernel and centring; anything else vips_resize, without its box
/// pre-shrink.
int tf_resize_exact(VipsImage *in, VipsImage **out, int width, int height, int crop);

/// A new image in memory, `width` x `height` of `bands` bands of `format`, its pixels for the
/// caller to fill, every byte (a buffer may hold an earlier job's pixels). Buffers of 1 MiB and
/// more come from the worker's pool (a JPEG's decode and the resize's passes take theirs from it)
/// and go back to it when the image closes. NULL on failure.
VipsImage *tf_pool_image(int width, int height, int bands, VipsBandFormat format);

/// What the pool keeps for the next job now: blocks and bytes (at most 8 and 96 MiB).
void tf_pool_kept(int *blocks, size_t *bytes);
/// Resizes to exactly width x height with a triangle (linear) kernel, which does not ring: a gain
/// map's, whose peaks Lanczos3 overshoots (by up to 24 %, as issue 53 measured: a brighter
/// highlight than the picture has).
int tf_resize_linear(VipsImage *in, VipsImage **out, int width, int height);
/// The rectangle of `in` at (left, top), width x height (vips_extract_area).
int tf_extract(VipsImage *in, VipsImage **out, int left, int top, int width, int height);

/// Resizes to exactly width x height for a placeholder: the image itself when it is that size,
/// tf_resize_exact's Lanczos3 when that is its fast path, else the cheap way — libvips' box
/// pre-shrink, then Lanczos3 (vips_resize's default gap of 2), where the blur hides the box.
int tf_resize_coarse(VipsImage *in, VipsImage **out, int width, int height);

/// The transpose (x and y swapped) of an 8-bit image in memory, as a new memory image with the
/// same metadata.
int tf_transpose(VipsImage *in, VipsImage **out);

/// The (small, upright, sRGB) image as 8-bit RGBA (4 bands, opaque where it had no alpha): the
/// pixels a ThumbHash placeholder is computed from.
int tf_placeholder_rgba(VipsImage *in, VipsImage **out);

/// tf_placeholder_rgba's pixels, g_malloc'd (`length` = 4 × pixels): for 8-bit grey and sRGB
/// images computed here in one pass (no libvips operation), else through tf_placeholder_rgba.
void *tf_placeholder_pixels(VipsImage *in, size_t *length);

/// Turns an image upright for an EXIF orientation (1-8), as libvips' autorot does.
int tf_autorot(VipsImage *in, VipsImage **out, int orientation);

/// Non-zero for CMYK pixels.
int tf_is_cmyk(VipsImage *image);

/// How many references hold the image (GObject's count; a lazy image made from it holds one).
unsigned int tf_ref_count(VipsImage *image);

/* Gives the heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere). */
void tf_trim_heap(void);

/// The image has no embedded ICC profile (`tf_profile_intent`).
#define TF_PROFILE_NONE (-1)
/// The embedded profile cannot be used: lcms cannot read it, it is for other channels than the
/// image has, or it has a table for no rendering intent.
#define TF_PROFILE_UNUSABLE (-2)

/// The rendering intent the image's embedded profile is converted with: relative colorimetric
/// when the profile supports it as an input profile, else the first it does of perceptual and
/// saturation (libvips 8.14 would swap a profile without a relative-colorimetric table, such as
/// an XYB JPEG's or some CMYK profiles, for its default sRGB or CMYK profile); or
/// TF_PROFILE_NONE, TF_PROFILE_UNUSABLE.
int tf_profile_intent(VipsImage *image);

/// Converts to 8-bit sRGB from the embedded ICC profile (CMYK without one: from
/// libvips' default CMYK profile) with the intent `tf_profile_intent` chooses, and drops the
/// profile; grey stays one band. Untagged images pass through untouched (a transform could
/// only shift them), and so an image converted once. An embedded profile that cannot be used is
/// ignored (the pixels taken as sRGB, CMYK through the default profile): the header says so.
int tf_to_srgb(VipsImage *in, VipsImage **out);

/// `tf_to_srgb` with the intent `tf_profile_intent` gave for this image's profile already (the
/// header read it): the profile is not parsed again.
int tf_to_srgb_with(VipsImage *in, VipsImage **out, int intent);

/// A copy of the image whose ICC profile is `length` bytes at `profile`, copied (none when
/// `length` is 0). libvips 8.14's HEIF loader attaches the profile, EXIF and XMP as blobs that
/// point into memory its loader image owns: once the load is done and that image is gone, a
/// decoded image's profile is freed memory that the next allocation overwrites (HEIC and AVIF
/// colours changed from run to run). The decode's pixels therefore take the profile read at the
/// probe, copied out while the header image was alive.
int tf_with_profile(VipsImage *in, VipsImage **out, const void *profile, size_t length);

/// The colour channels of a decoded HDR picture (PNG, TIFF, JPEG... whose cICP or ICC `cicp`
/// says PQ or HLG: `transfer` 16 or 18), taken as BT.2020 code values without any profile,
/// resized (Lanczos3) to `width` x `height` and tone-mapped to 8-bit sRGB as HEIF and video
/// are: `out`, with the gain map when `gain` is set. 0, or -1 with a reason.
int tf_hdr_decode_image(VipsImage *in, int transfer, int primaries, int width, int height, int gain, TFHdrBox *out, char *error,
                        size_t error_length);

/// Flattens an alpha channel onto white (for formats without alpha).
int tf_flatten_white(VipsImage *in, VipsImage **out);

/// Encodes to memory without metadata. The buffer is freed with g_free().
int tf_save_buffer(VipsImage *in, TFFormat format, int quality, int interlace, void **buffer, size_t *length);

/// A baseline JPEG (RGB or grey) decoded at 1/shrink by libjpeg in the calling thread into a
/// memory image, as tf_jpeg_load_shrunk's pixels and ICC profile (jpeg.c). Returns 1 with `*out`
/// set; 0 when it leaves the file to libvips (progressive, CMYK, any warning or error; nothing
/// in libvips' error buffer); -1 when the deadline or `*stop` stopped it (`*reason`).
int tf_jpeg_decode_here(const void *data, size_t length, int shrink, double timeout_seconds, const int *stop, VipsImage **out, int *reason);

/// JPEG: libvips' jpegsave_buffer with "strip" (jpeg.c's encoder must equal it byte for byte).
int tf_jpegsave_libvips(VipsImage *in, int quality, int interlace, void **buffer, size_t *length);

/// JPEG encoded by libjpeg in the calling thread (jpeg.c): libvips' bytes without its thread
/// pool; images libvips would first convert for saving go through tf_jpegsave_libvips.
int tf_jpegsave_here(VipsImage *in, int quality, int interlace, void **buffer, size_t *length);

/// Reads the EXIF block with libexif, without libexif "fixing" it to the specification
/// (that would invent default entries that are not in the file).
ExifData *tf_exif_load(const unsigned char *data, unsigned int length);

/// The entry for `tag` in one IFD, or NULL.
ExifEntry *tf_exif_entry(ExifData *exif, ExifIfd ifd, ExifTag tag);

/// A SHORT entry's first value in the block's byte order; -1 when the entry is not a SHORT.
int tf_exif_short(ExifData *exif, ExifEntry *entry);

/// Why a guarded decode stopped early.
typedef enum {
    TF_STOP_NONE = 0,
    TF_STOP_DEADLINE = 1,  ///< it ran past its deadline
    TF_STOP_REQUESTED = 2, ///< `*stop` became non-zero (SIGINT/SIGTERM)
} TFStopReason;

/// `vips_image_write_to_memory`, computed in the calling thread when libvips runs one thread
/// per image (no thread pool hand-offs); g_free the result.
void *tf_write_to_memory(VipsImage *in, size_t *length);

/// Computes `in` into memory (`vips_image_copy_memory`) while the clock and `*stop` are
/// watched: past `timeout_seconds` (0: no deadline) or once `*stop` is non-zero, the
/// computation fails within a tile (with several libvips threads, libvips' eval callback kills
/// the image; with one, the strips are pulled in the calling thread and checked between).
/// `*reason` says which, or TF_STOP_NONE. An image already in memory is returned itself (a
/// new reference).
VipsImage *tf_copy_memory_guarded(VipsImage *in, double timeout_seconds, const int *stop, int *reason);

/// Reads `*flag` atomically; `tf_flag_set` writes it (from any thread or a signal handler).
int tf_flag_get(const int *flag);
void tf_flag_set(int *flag, int value);

/// Bytes per band of the image's pixel format (1 for uchar, 2 for ushort, ...).
int tf_image_sizeof_band(VipsImage *image);

/// The deadline and stop flag of a decode that a library's callback polls (FFmpeg's interrupt
/// callback, LibRaw's progress callback).
typedef struct {
    double deadline; ///< CLOCK_MONOTONIC seconds; 0: none
    const int *stop; ///< non-zero once the build is cancelled
    int stopped;     ///< a TFStopReason once the guard has said stop
} TFDecodeGuard;

/// A guard `timeout_seconds` from now (0: no deadline) watching `stop`.
TFDecodeGuard tf_guard_start(double timeout_seconds, const int *stop);

/// 1 (and `stopped` set) once the build is cancelled or the deadline has passed, else 0.
int tf_guard_check(TFDecodeGuard *guard);

/// An sRGB image of a copy of `width` x `height` packed 8-bit RGB pixels (a video's poster frame).
int tf_image_from_rgb(const void *pixels, size_t length, int width, int height, VipsImage **out);

/// A grey image of a copy of `width` x `height` 8-bit values (a gain map).
int tf_image_from_grey(const void *pixels, size_t length, int width, int height, VipsImage **out);

/// Writes a DeepZoom pyramid (layout DZ) of the image in `data` at full resolution, turned
/// upright by `orientation`, converted to sRGB with `intent` (`tf_profile_intent`'s) and the
/// probe's copy of its profile (`profile`, `profile_length` bytes; none: 0), alpha flattened
/// onto white for JPEG, every metadata field dropped: `path`.dzi and
/// `path`_files/<level>/<column>_<row>.<jpg|webp> (TF_FORMAT_JPEG or _WEBP at `quality`), plus
/// dzsave's `path`_files/vips-properties.xml. The levels below the full size are Lanczos3
/// reductions (libvips' thumbnail to half, then level by level), as sharp as the renditions;
/// each level is one dzsave of depth one. Past `timeout_seconds` (0: none) or once `*stop` is
/// non-zero the next region fails and `*reason` says which.
int tf_dzsave(const void *data, size_t length, int fail_on, int orientation, int intent, const void *profile, size_t profile_length,
              const char *path, int format, int quality, int tile_size, int overlap, double timeout_seconds, const int *stop, int *reason);

#endif // THUMBFRAME_IMAGING
#endif
