#include <libraw/libraw.h>

#include "tf_raw.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tf_shim.h"

_Static_assert(TF_RAW_FILE_UNSUPPORTED == LIBRAW_FILE_UNSUPPORTED && TF_RAW_NONEXISTENT_IMAGE == LIBRAW_REQUEST_FOR_NONEXISTENT_IMAGE &&
                   TF_RAW_OUT_OF_ORDER_CALL == LIBRAW_OUT_OF_ORDER_CALL && TF_RAW_DATA_ERROR == LIBRAW_DATA_ERROR &&
                   TF_RAW_IO_ERROR == LIBRAW_IO_ERROR,
               "LibRaw's error codes");

struct TFRaw {
    libraw_data_t *data;
    TFDecodeGuard guard;
    int data_error;
};

// LibRaw's report of data it could not read (by default a line on stderr naming no file,
// "unknown file: Unexpected end of file"): kept, for the reason the caller gives.
static void tf_raw_record_data_error(void *opaque, const char *file, const int offset) {
    (void) file;
    TFRaw *raw = opaque;
    raw->data_error = offset < 0 ? TF_RAW_DATA_CUT : TF_RAW_DATA_DAMAGED;
}

// LibRaw calls this between the stages of unpacking and processing: non-zero cancels.
static int tf_raw_progress(void *opaque, enum LibRaw_progress stage, int iteration, int expected) {
    (void) stage, (void) iteration, (void) expected;
    TFRaw *raw = opaque;
    return tf_guard_check(&raw->guard);
}

TFRaw *tf_raw_open(const void *data, size_t length, unsigned max_memory_mb, double timeout_seconds, const int *stop, TFRawInfo *info,
                   int *error) {
    memset(info, 0, sizeof *info);
    TFRaw *raw = calloc(1, sizeof *raw);
    if (!raw) {
        *error = LIBRAW_UNSUFFICIENT_MEMORY;
        return NULL;
    }
    raw->data = libraw_init(0);
    if (!raw->data) {
        free(raw);
        *error = LIBRAW_UNSUFFICIENT_MEMORY;
        return NULL;
    }
    raw->guard = tf_guard_start(timeout_seconds, stop);
    raw->data->params.max_raw_memory_mb = max_memory_mb;
    libraw_set_progress_handler(raw->data, tf_raw_progress, raw);
    libraw_set_dataerror_handler(raw->data, tf_raw_record_data_error, raw);
    *error = libraw_open_buffer(raw->data, (void *) data, length);
    if (*error != LIBRAW_SUCCESS) {
        tf_raw_close(raw);
        return NULL;
    }
    libraw_image_sizes_t *sizes = &raw->data->sizes;
    info->width = sizes->width;
    info->height = sizes->height;
    info->flip = sizes->flip;
    libraw_thumbnail_t *thumb = &raw->data->thumbnail;
    // The preview's kind is known once it is unpacked; until then, whether it has a size.
    info->preview = thumb->twidth <= 0 || thumb->theight <= 0   ? TF_RAW_PREVIEW_NONE
                    : thumb->tformat == LIBRAW_THUMBNAIL_BITMAP ? TF_RAW_PREVIEW_BITMAP
                                                                : TF_RAW_PREVIEW_JPEG;
    info->preview_width = thumb->twidth;
    info->preview_height = thumb->theight;
    memcpy(info->make, raw->data->idata.make, sizeof info->make);
    info->make[sizeof info->make - 1] = 0;
    memcpy(info->model, raw->data->idata.model, sizeof info->model);
    info->model[sizeof info->model - 1] = 0;
    info->timestamp = (long long) raw->data->other.timestamp;
    info->dng = raw->data->idata.dng_version != 0;
    return raw;
}

static int tf_raw_image(libraw_processed_image_t *made, int error, TFRawImage *image) {
    memset(image, 0, sizeof *image);
    if (!made) return error ? error : LIBRAW_UNSPECIFIED_ERROR;
    image->handle = made;
    image->jpeg = made->type == LIBRAW_IMAGE_JPEG;
    image->width = made->width;
    image->height = made->height;
    image->colors = made->colors;
    image->bits = made->bits;
    image->data = made->data;
    image->length = made->data_size;
    return 0;
}

void tf_raw_image_free(TFRawImage *image) {
    if (image->handle) libraw_dcraw_clear_mem(image->handle);
    memset(image, 0, sizeof *image);
}

const char *tf_raw_error_text(int code) { return libraw_strerror(code); }

int tf_raw_data_error(TFRaw *raw) { return raw->data_error; }

int tf_raw_preview(TFRaw *raw, TFRawImage *image) {
    memset(image, 0, sizeof *image);
    int error = libraw_unpack_thumb(raw->data);
    if (error != LIBRAW_SUCCESS) return error;
    libraw_processed_image_t *made = libraw_dcraw_make_mem_thumb(raw->data, &error);
    return tf_raw_image(made, error, image);
}

int tf_raw_develop(TFRaw *raw, int half, TFRawImage *image) {
    memset(image, 0, sizeof *image);
    int error;
    libraw_output_params_t *params = &raw->data->params;
    params->half_size = half;
    params->use_camera_wb = 1;
    params->output_bps = 8;
    params->output_color = 1; // sRGB
    error = libraw_unpack(raw->data);
    if (error != LIBRAW_SUCCESS) return error;
    error = libraw_dcraw_process(raw->data);
    if (error != LIBRAW_SUCCESS) return error;
    libraw_processed_image_t *made = libraw_dcraw_make_mem_image(raw->data, &error);
    return tf_raw_image(made, error, image);
}

int tf_raw_stopped(TFRaw *raw) { return raw->guard.stopped; }

void tf_raw_close(TFRaw *raw) {
    if (!raw) return;
    if (raw->data) libraw_close(raw->data);
    free(raw);
}
