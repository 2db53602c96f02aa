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

int tf_image_from_buffer(const void *data, size_t length, VipsImage **out, int fail_on) {
    *out = tf_image_new_from_buffer(data, length, fail_on);
    return *out ? 0 : -1;
}

int tf_page_size(const void *data, size_t length, int page, int *width, int *height) {
    VipsImage *image = vips_image_new_from_buffer(data, length, "", "page", page, NULL);
    if (!image)
        return -1;
    *width = image->Xsize;
    *height = image->Ysize;
    g_object_unref(image);
    return 0;
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
    // FORCE: exactly width x height (the caller planned it from the aspect ratio), so no
    // thumbnail is later resized by a pixel and blurred. The pyramid level or shrink-on-load
    // scale is still chosen to cover the box.
    return vips_thumbnail_buffer((void *) data, length, out, width,
        "height", height,
        "size", VIPS_SIZE_FORCE,
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

static int tf_resize_gap(VipsImage *in, VipsImage **out, int width, int height, int crop, double gap) {
    VipsImage *t[6] = { NULL };
    int result = -1;
    double hscale = (double) width / in->Xsize;
    double vscale = (double) height / in->Ysize;
    if (crop)
        hscale = vscale = VIPS_MAX(hscale, vscale);
    VipsImage *current = in;
    // Alpha is premultiplied for the resize, so transparent pixels lend no colour to their
    // neighbours (as vips_thumbnail does).
    VipsBandFormat format = in->BandFmt;
    gboolean alpha = vips_image_hasalpha(in);
    if (alpha) {
        if (vips_premultiply(current, &t[0], NULL))
            goto done;
        current = t[0];
    }
    if (vips_resize(current, &t[1], hscale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3, "gap", gap, NULL))
        goto done;
    current = t[1];
    if (alpha) {
        if (vips_unpremultiply(current, &t[2], NULL) || vips_cast(t[2], &t[3], format, NULL))
            goto done;
        current = t[3];
    }
    // Cover: the centre. Fit: vips_resize rounds each side; absorb a pixel of rounding by
    // cropping, or by repeating the edge where it came out short.
    int cw = VIPS_MIN(width, current->Xsize);
    int ch = VIPS_MIN(height, current->Ysize);
    if (cw != current->Xsize || ch != current->Ysize) {
        if (vips_crop(current, &t[4], (current->Xsize - cw) / 2, (current->Ysize - ch) / 2, cw, ch, NULL))
            goto done;
        current = t[4];
    }
    if (current->Xsize != width || current->Ysize != height) {
        if (vips_embed(current, &t[5], 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL))
            goto done;
        current = t[5];
    }
    g_object_ref(current);
    *out = current;
    result = 0;
done:
    for (int i = 0; i < 6; i++)
        if (t[i])
            g_object_unref(t[i]);
    return result;
}

int tf_resize_exact(VipsImage *in, VipsImage **out, int width, int height, int crop) {
    // Lanczos3 alone ("gap" 0: no box pre-shrink, which aliases): the inputs here are already
    // near their thumbnails' size, so the wider kernel costs little (zone plate: +4 dB against
    // libvips' default gap of 2 on a 5x reduction).
    return tf_resize_gap(in, out, width, height, crop, 0.0);
}

int tf_placeholder_rgba(VipsImage *in, VipsImage **out, int width, int height) {
    VipsImage *t[4] = { NULL };
    int result = -1;
    // A placeholder is a blur of a few DCT terms: libvips' default box pre-shrink is plenty.
    if (tf_resize_gap(in, &t[0], width, height, 0, 2.0) ||
        vips_colourspace(t[0], &t[1], VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    VipsImage *current = t[1];
    if (!vips_image_hasalpha(current)) {
        if (vips_bandjoin_const1(current, &t[2], 255.0, NULL))
            goto done;
        current = t[2];
    }
    if (vips_cast(current, &t[3], VIPS_FORMAT_UCHAR, NULL))
        goto done;
    *out = t[3];
    t[3] = NULL;
    result = 0;
done:
    for (int i = 0; i < 4; i++)
        if (t[i])
            g_object_unref(t[i]);
    return result;
}

int tf_autorot(VipsImage *in, VipsImage **out, int orientation) {
    VipsImage *tagged;
    if (vips_copy(in, &tagged, NULL))
        return -1;
    vips_image_set_int(tagged, VIPS_META_ORIENTATION, orientation);
    int result = vips_autorot(tagged, out, NULL);
    g_object_unref(tagged);
    return result;
}

int tf_is_cmyk(VipsImage *image) {
    return image->Type == VIPS_INTERPRETATION_CMYK && image->Bands >= 4;
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

int tf_to_srgb(VipsImage *in, VipsImage **out) {
    gboolean tagged = vips_image_get_typeof(in, VIPS_META_ICC_NAME) != 0;
    gboolean cmyk = tf_is_cmyk(in);
    if (!tagged && !cmyk)
        return vips_copy(in, out, NULL);
    gboolean grey = in->Bands - (vips_image_hasalpha(in) ? 1 : 0) == 1;
    VipsImage *t[3] = { NULL };
    int result = -1;
    if (vips_icc_transform(in, &t[0], "srgb",
            "embedded", tagged,
            "input_profile", cmyk ? "cmyk" : "srgb",
            "intent", VIPS_INTENT_RELATIVE,
            "depth", 8,
            NULL)) {
        /* An embedded profile lcms cannot use (broken, or for other bands): as if untagged. */
        vips_error_clear();
        if (!cmyk) {
            if (vips_copy(in, &t[0], NULL))
                goto done;
        }
        else if (vips_icc_transform(in, &t[0], "srgb", "input_profile", "cmyk",
                "intent", VIPS_INTENT_RELATIVE, "depth", 8, NULL))
            goto done;
    }
    VipsImage *current = t[0];
    if (grey) {
        if (vips_colourspace(current, &t[1], VIPS_INTERPRETATION_B_W, NULL))
            goto done;
        current = t[1];
    }
    /* The pixels are sRGB now and carry no profile: converting again changes nothing. */
    if (vips_copy(current, &t[2], NULL))
        goto done;
    vips_image_remove(t[2], VIPS_META_ICC_NAME);
    *out = t[2];
    t[2] = NULL;
    result = 0;
done:
    for (int i = 0; i < 3; i++)
        if (t[i])
            g_object_unref(t[i]);
    return result;
}

int tf_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile,
    int embedded, int depth) {
    return vips_icc_transform(in, out, output_profile,
        "input_profile", input_profile,
        "embedded", embedded ? TRUE : FALSE,
        "intent", VIPS_INTENT_RELATIVE,
        "depth", depth,
        NULL);
}

int tf_delta_e00(VipsImage *a, VipsImage *b, VipsImage **out) {
    VipsImage *la = NULL, *lb = NULL;
    int result = -1;
    if (!vips_colourspace(a, &la, VIPS_INTERPRETATION_LAB, NULL) &&
        !vips_colourspace(b, &lb, VIPS_INTERPRETATION_LAB, NULL))
        result = vips_dE00(la, lb, out, NULL);
    if (la)
        g_object_unref(la);
    if (lb)
        g_object_unref(lb);
    return result;
}

int tf_cast_double(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_DOUBLE, NULL);
}
