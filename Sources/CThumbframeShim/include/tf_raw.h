#ifndef TF_RAW_H
#define TF_RAW_H

// LibRaw behind fixed-argument functions and types of the shim's own: its progress callback as
// the decode deadline and the build's cancellation, its memory cap, and the facts an item needs.
// No LibRaw header is included here (libraw.h defines _FILE_OFFSET_BITS, which would give the
// system headers of every module that imports the shim another shape); raw.c alone includes it.
// Declared to ThumbframeImaging alone (THUMBFRAME_IMAGING), as tf_shim.h is.
#ifdef THUMBFRAME_IMAGING

#include <stddef.h>

/// An opened RAW file: LibRaw's handle and the guard its progress callback reads.
typedef struct TFRaw TFRaw;

/// The kinds of embedded preview (LibRaw's LIBRAW_THUMBNAIL_* that thumbframe can use).
typedef enum {
    TF_RAW_PREVIEW_NONE = 0,
    TF_RAW_PREVIEW_JPEG = 1,
    TF_RAW_PREVIEW_BITMAP = 2,
} TFRawPreview;

/// What LibRaw says of a RAW file without decoding it.
typedef struct {
    int width, height;                 ///< the image LibRaw renders, before its flip
    int flip;                          ///< LibRaw's flip: 0, 3 (180°), 5 (90° counter-clockwise), 6 (90° clockwise)
    int preview;                       ///< a TFRawPreview: the largest embedded preview's kind
    int preview_width, preview_height; ///< its size, as stored (the flip not applied)
    char make[64], model[64];
    int dng;             ///< non-zero for a DNG
    long long timestamp; ///< capture time as LibRaw read it (mktime of the local time), 0 if none
} TFRawInfo;

/// A picture LibRaw made: JPEG bytes (`jpeg`), or packed RGB of `bits` per sample. Freed by
/// tf_raw_image_free.
typedef struct {
    void *handle;
    int jpeg;
    int width, height, colors, bits;
    const unsigned char *data;
    size_t length;
} TFRawImage;

/// Opens a RAW file from memory, refusing more than `max_memory_mb` of raw data, with
/// `timeout_seconds` (0: none) and `*stop` checked from LibRaw's progress callback. NULL on
/// failure, with LibRaw's error code in `*error` (tf_raw_error_text says it).
TFRaw *tf_raw_open(const void *data, size_t length, unsigned max_memory_mb, double timeout_seconds, const int *stop, TFRawInfo *info,
                   int *error);

/// The largest embedded preview, unpacked: 0, or LibRaw's error code.
int tf_raw_preview(TFRaw *raw, TFRawImage *image);

/// The sensor's picture demosaiced (at half size when `half`), camera white balance, 8-bit sRGB,
/// LibRaw's flip applied: 0, or LibRaw's error code.
int tf_raw_develop(TFRaw *raw, int half, TFRawImage *image);

void tf_raw_image_free(TFRawImage *image);

/// LibRaw's sentence for an error code.
const char *tf_raw_error_text(int code);

/// LibRaw's error codes the reasons tell apart (checked against libraw_const.h in raw.c).
#define TF_RAW_FILE_UNSUPPORTED (-2)
#define TF_RAW_NONEXISTENT_IMAGE (-3)
#define TF_RAW_OUT_OF_ORDER_CALL (-4)
#define TF_RAW_DATA_ERROR (-100008)
#define TF_RAW_IO_ERROR (-100009)

/// What LibRaw's data error handler reported: nothing, the data ended before LibRaw had read
/// it all (a cut file), or data it could not make sense of.
#define TF_RAW_DATA_NONE 0
#define TF_RAW_DATA_CUT 1
#define TF_RAW_DATA_DAMAGED 2
int tf_raw_data_error(TFRaw *raw);

/// Why the last call stopped early: 0 not, 1 the deadline, 2 the stop flag.
int tf_raw_stopped(TFRaw *raw);

/// Closes the file and frees LibRaw's handle.
void tf_raw_close(TFRaw *raw);

#endif // THUMBFRAME_IMAGING
#endif
