#define _GNU_SOURCE
#include "tf_shim.h"

#include <unistd.h>

#include <libexif/exif-utils.h>

static void tf_discard_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void) domain; (void) level; (void) message; (void) data;
}

int tf_vips_start(const char *argv0) {
    if (VIPS_INIT(argv0))
        return -1;
    // libvips reports decode trouble twice: in its error buffer, which the failing call's caller
    // turns into a failure entry naming the file, and as g_warning lines on stderr that name no
    // file and interleave across workers. Keep the first only.
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, tf_discard_log, NULL);
    // A batch opens every file once: caching operations would only hold memory.
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    // Loaders built on large, fuzz-unhardened libraries (ImageMagick, PDFium, ...) stay off.
    vips_block_untrusted_set(TRUE);
    return 0;
}

VipsImage *tf_image_new_from_buffer(const void *data, size_t length, int fail_on) {
    return vips_image_new_from_buffer(data, length, "",
        "access", VIPS_ACCESS_SEQUENTIAL,
        "fail_on", (VipsFailOn) fail_on,
        NULL);
}

VipsImage *tf_image_new_from_file(const char *path) {
    return vips_image_new_from_file(path, NULL);
}

int tf_thumbnail_buffer(const void *data, size_t length, VipsImage **out, int width, int height, int fail_on) {
    // libvips 8.14 does not hand thumbnail_buffer's own "fail_on" to the loader (a truncated
    // JPEG would decode half grey); the loader's option string does reach it.
    char options[64];
    const char *level = vips_enum_nick(VIPS_TYPE_FAIL_ON, fail_on);
    g_snprintf(options, sizeof(options), "fail_on=%s", level ? level : "none");
    return vips_thumbnail_buffer((void *) data, length, out, width,
        "height", height,
        "size", VIPS_SIZE_DOWN,
        "option_string", options,
        NULL);
}

int tf_jpeg_load_shrunk(const void *data, size_t length, VipsImage **out, int shrink, int fail_on) {
    return vips_jpegload_buffer((void *) data, length, out,
        "shrink", shrink,
        "fail_on", (VipsFailOn) fail_on,
        "access", VIPS_ACCESS_SEQUENTIAL,
        NULL);
}

int tf_thumbnail_image_upright(VipsImage *in, VipsImage **out, int width, int height) {
    return vips_thumbnail_image(in, out, width,
        "height", height,
        "size", VIPS_SIZE_DOWN,
        NULL);
}

int tf_thumbnail_image(VipsImage *in, VipsImage **out, int width, int height, int crop) {
    // Cover: shrink to cover the box, then crop its centre (exactly width x height).
    if (crop)
        return vips_thumbnail_image(in, out, width,
            "height", height,
            "size", VIPS_SIZE_DOWN,
            "no_rotate", TRUE,
            "crop", VIPS_INTERESTING_CENTRE,
            NULL);
    // Fit: the caller has worked out the exact output size from the original's aspect ratio;
    // forcing it avoids a one-pixel rounding drift from the already shrunk input.
    return vips_thumbnail_image(in, out, width,
        "height", height,
        "size", VIPS_SIZE_FORCE,
        "no_rotate", TRUE,
        NULL);
}

int tf_flatten_white(VipsImage *in, VipsImage **out) {
    double white[] = { 255.0, 255.0, 255.0 };
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

int tf_save_buffer(VipsImage *in, TFFormat format, int quality, int interlace, void **buffer, size_t *length) {
    switch (format) {
    case TF_FORMAT_JPEG:
        return vips_jpegsave_buffer(in, buffer, length,
            "Q", quality, "strip", TRUE, "interlace", interlace ? TRUE : FALSE, NULL);
    case TF_FORMAT_WEBP:
        return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, NULL);
    case TF_FORMAT_AVIF:
        return vips_heifsave_buffer(in, buffer, length,
            "Q", quality, "strip", TRUE,
            "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, NULL);
    case TF_FORMAT_PNG:
        break;  /* not a thumbnail format; fixtures write PNG with tf_save_file */
    }
    vips_error("thumbframe", "unknown output format %d", (int) format);
    return -1;
}

int tf_write_to_file(VipsImage *in, const char *path_with_options) {
    return vips_image_write_to_file(in, path_with_options, NULL);
}

int tf_save_file(VipsImage *in, const char *path, TFFormat format, int quality) {
    // Unlike tf_save_buffer this keeps metadata, so a fixture can carry its orientation tag.
    switch (format) {
    case TF_FORMAT_JPEG:
        return vips_jpegsave(in, path, "Q", quality, NULL);
    case TF_FORMAT_WEBP:
        return vips_webpsave(in, path, "Q", quality, NULL);
    case TF_FORMAT_AVIF:
        return vips_heifsave(in, path, "Q", quality,
            "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, NULL);
    case TF_FORMAT_PNG:
        return vips_pngsave(in, path, NULL);
    }
    vips_error("thumbframe", "unknown output format %d", (int) format);
    return -1;
}

ExifData *tf_exif_load(const unsigned char *data, unsigned int length) {
    ExifData *exif = exif_data_new();
    if (!exif)
        return NULL;
    exif_data_unset_option(exif, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_load_data(exif, data, length);
    return exif;
}

ExifEntry *tf_exif_entry(ExifData *exif, ExifIfd ifd, ExifTag tag) {
    if (!exif || ifd < 0 || ifd >= EXIF_IFD_COUNT || !exif->ifd[ifd])
        return NULL;
    return exif_content_get_entry(exif->ifd[ifd], tag);
}

int tf_exif_short(ExifData *exif, ExifEntry *entry) {
    if (!exif || !entry || entry->format != EXIF_FORMAT_SHORT || entry->components < 1 || entry->size < 2)
        return -1;
    return exif_get_short(entry->data, exif_data_get_byte_order(exif));
}

typedef struct {
    gint64 deadline;  /* g_get_monotonic_time() microseconds; 0: none */
    const int *stop;
    int reason;
} TFGuard;

static void tf_guard_eval(VipsImage *image, VipsProgress *progress, void *data) {
    TFGuard *guard = data;
    (void) progress;
    if (guard->reason == TF_STOP_NONE) {
        if (guard->stop && tf_flag_get(guard->stop))
            guard->reason = TF_STOP_REQUESTED;
        else if (guard->deadline && g_get_monotonic_time() > guard->deadline)
            guard->reason = TF_STOP_DEADLINE;
    }
    if (guard->reason != TF_STOP_NONE)
        vips_image_set_kill(image, TRUE);
}

VipsImage *tf_copy_memory_guarded(VipsImage *in, double timeout_seconds, const int *stop, int *reason) {
    TFGuard guard = { 0, stop, TF_STOP_NONE };
    if (timeout_seconds > 0)
        guard.deadline = g_get_monotonic_time() + (gint64) (timeout_seconds * 1e6);
    /* Progress is signalled on the most downstream image that asked for it: this one, for
     * every tile the copy computes. */
    vips_image_set_progress(in, TRUE);
    gulong handler = g_signal_connect(in, "eval", G_CALLBACK(tf_guard_eval), &guard);
    VipsImage *out = vips_image_copy_memory(in);
    g_signal_handler_disconnect(in, handler);
    *reason = guard.reason;
    if (out && guard.reason != TF_STOP_NONE) {
        /* Killed after the last tile: the pixels are whole, keep them. */
        *reason = TF_STOP_NONE;
    }
    return out;
}

int tf_flag_get(const int *flag) {
    return __atomic_load_n(flag, __ATOMIC_RELAXED);
}

void tf_flag_set(int *flag, int value) {
    __atomic_store_n(flag, value, __ATOMIC_RELAXED);
}

int tf_image_sizeof_band(VipsImage *image) {
    return (int) vips_format_sizeof(vips_image_get_format(image));
}

int tf_syncfs(int fd) {
#ifdef __linux__
    return syncfs(fd);
#else
    return fsync(fd);
#endif
}
