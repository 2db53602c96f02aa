/* Deep-zoom tiles: libvips' dzsave over the full-resolution image, upright, sRGB and without
 * metadata, under the file's deadline and the build's stop flag. */
#include "tf_jxl.h"
#include "tf_shim.h"
#include "guard.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A pass-through image that fails every region asked of it once the guard says stop: dzsave's
 * sink checks no callback of ours, so the stop travels as a pixel error. */
static int tf_guarded_gen(VipsRegion *out, void *seq, void *a, void *b, gboolean *stop) {
    (void) a;
    (void) stop;
    VipsRegion *in = (VipsRegion *) seq;
    if (tf_guard_stops((TFGuard *) b)) {
        vips_error("thumbframe", "stopped");
        return -1;
    }
    return vips_region_prepare_to(in, out, &out->valid, out->valid.left, out->valid.top);
}

static int tf_guarded(VipsImage *in, VipsImage **out, TFGuard *guard) {
    *out = vips_image_new();
    if (vips_image_pipelinev(*out, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL) ||
        vips_image_generate(*out, vips_start_one, tf_guarded_gen, vips_stop_one, in, guard)) {
        g_object_unref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* A copy of the image without a single metadata field: no EXIF (GPS), XMP, IPTC or profile can
 * reach a tile or the vips-properties.xml dzsave writes beside them. */
static int tf_without_metadata(VipsImage *in, VipsImage **out) {
    if (vips_copy(in, out, NULL)) return -1;
    gchar **fields = vips_image_get_fields(*out);
    for (int i = 0; fields[i]; i++)
        (void) vips_image_remove(*out, fields[i]);
    g_strfreev(fields);
    return 0;
}

static int tf_dzsave_rename(const char *path, int from, int to);

/* dzsave of one level, `image`, as DeepZoom level `level` of the pyramid at `path`: dzsave with
 * depth one writes its only level as folder 0, which is renamed to the level's number (and its
 * .dzi describes this level; the full size is written last). */
static int tf_dzsave_level(VipsImage *image, const char *path, int level, const char *suffix, int tile_size, int overlap) {
    if (vips_dzsave(image, path, "layout", VIPS_FOREIGN_DZ_LAYOUT_DZ, "suffix", suffix, "tile_size", tile_size, "overlap", overlap, "depth",
                    VIPS_FOREIGN_DZ_DEPTH_ONE, NULL))
        return -1;
    return tf_dzsave_rename(path, 0, level);
}

/* Renames the level folder `from_level` of the pyramid at `path` to `level`. */
static int tf_dzsave_rename(const char *path, int from_level, int level) {
    if (from_level == level) return 0;
    char *from = g_strdup_printf("%s_files/%d", path, from_level);
    char *to = g_strdup_printf("%s_files/%d", path, level);
    int result = rename(from, to);
    if (result) vips_error("thumbframe", "cannot name level %d of the pyramid: %s", level, g_strerror(errno));
    g_free(from);
    g_free(to);
    return result ? -1 : 0;
}

/* Seconds left before the guard's deadline (0: none; a little when it has passed, so the next
 * guarded step says so). */
static double tf_guard_left(const TFGuard *guard) {
    if (!guard->deadline) return 0;
    double left = (double) (guard->deadline - g_get_monotonic_time()) / 1e6;
    return left > 0.001 ? left : 0.001;
}

/* A decode as tiles show it: the probe's copy of its profile attached (see tf_with_profile) and
 * converted to sRGB with `intent`, turned upright by `orientation` (1: as it is), alpha flattened
 * onto white for JPEG tiles, every metadata field dropped. */
static int tf_tile_pixels(VipsImage *in, VipsImage **out, int orientation, int intent, const void *profile, size_t profile_length,
                          int format) {
    VipsImage *t[4] = {NULL};
    int result = -1;
    if (tf_with_profile(in, &t[0], profile, profile_length) || tf_to_srgb_with(t[0], &t[1], profile_length ? intent : -1)) goto done;
    if (orientation != 1 && tf_autorot(t[1], &t[2], orientation)) goto done;
    VipsImage *upright = t[2] ? t[2] : t[1];
    if (format == TF_FORMAT_JPEG && vips_image_hasalpha(upright)) {
        if (tf_flatten_white(upright, &t[3])) goto done;
        upright = t[3];
    }
    result = tf_without_metadata(upright, out);
done:
    for (int i = 3; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    return result;
}

/* Every level below the full size, smallest first: the full picture reduced to half by
 * libvips' thumbnail (shrink-on-load, then Lanczos3: the renditions' own pipeline), then each
 * level Lanczos3 from the one above, in memory. dzsave's own levels are 2x2 box averages. */
static int tf_dzsave_reduced(const void *data, size_t length, VipsImage *decoded, int fail_on, int intent, const void *profile,
                             size_t profile_length, const char *path, int format, const char *suffix, int tile_size, int overlap, int width,
                             int height, int levels, TFGuard *guard) {
    char options[64];
    const char *level_name = vips_enum_nick(VIPS_TYPE_FAIL_ON, fail_on);
    g_snprintf(options, sizeof(options), "fail_on=%s", level_name ? level_name : "none");
    int w = (width + 1) / 2, h = (height + 1) / 2;
    VipsImage *t[2] = {NULL};
    VipsImage *above = NULL;
    int result = -1;
    if (decoded
            ? vips_thumbnail_image(decoded, &t[0], w, "height", h, "size", VIPS_SIZE_FORCE, NULL)
            : vips_thumbnail_buffer((void *) data, length, &t[0], w, "height", h, "size", VIPS_SIZE_FORCE, "option_string", options, NULL))
        goto done;
    if (tf_tile_pixels(t[0], &t[1], 1, intent, profile, profile_length, format)) goto done;
    int reason = TF_STOP_NONE;
    if (!(above = tf_copy_memory_guarded(t[1], tf_guard_left(guard), guard->stop, &reason))) {
        guard->reason = reason;
        goto done;
    }
    for (int level = levels - 2; level >= 0; level--) {
        if (level < levels - 2) {
            w = (w + 1) / 2;
            h = (h + 1) / 2;
            VipsImage *reduced = NULL;
            if (tf_resize_exact(above, &reduced, w, h, 0)) goto done;
            VipsImage *held = vips_image_copy_memory(reduced);
            g_object_unref(reduced);
            if (!held) goto done;
            g_object_unref(above);
            above = held;
        }
        if (tf_guard_stops(guard)) {
            vips_error("thumbframe", "stopped");
            goto done;
        }
        /* Level 0 (one pixel) waits as level `levels` (a name of a level's shape, which the
         * cleanup of a failed pyramid removes): each dzsave of depth one writes folder 0. */
        if (tf_dzsave_level(above, path, level == 0 ? levels : level, suffix, tile_size, overlap)) goto done;
    }
    result = 0;
done:
    if (above) g_object_unref(above);
    for (int i = 1; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    return result;
}

int tf_dzsave(const void *data, size_t length, int fail_on, int orientation, int intent, const void *profile, size_t profile_length,
              const char *path, int format, int quality, int tile_size, int overlap, double timeout_seconds, const int *stop, int *reason) {
    *reason = TF_STOP_NONE;
    TFGuard *guard = g_new0(TFGuard, 1);
    guard->stop = stop;
    if (timeout_seconds > 0) guard->deadline = g_get_monotonic_time() + (gint64) (timeout_seconds * 1e6);
    /* Upright only streams when nothing turns it: any rotation reads the whole image (libvips
     * holds it in memory, or in a temporary file past its disc threshold). */
    VipsAccess access = orientation == 1 ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM;
    VipsImage *t[3] = {NULL};
    int result = -1;
    char suffix[64];
    g_snprintf(suffix, sizeof suffix, "%s[Q=%d,strip]", format == TF_FORMAT_WEBP ? ".webp" : ".jpg", quality);
    /* A JPEG XL through libjxl with the whole file as its input, as its thumbnails are (libvips
     * 8.14's loader fails on real files); decoded once, for every level. */
    const unsigned char *head = data;
    int jxl = length >= 12 && ((head[0] == 0xFF && head[1] == 0x0A) || memcmp(head, "\0\0\0\x0cJXL ", 8) == 0);
    if (jxl) {
        char message[256];
        if (tf_jxl_decode_image(data, length, INT64_MAX, &t[0], message, sizeof message)) {
            vips_error("thumbframe", "JPEG XL: %s", message);
            goto done;
        }
    } else if (!(t[0] = vips_image_new_from_buffer(data, length, "", "access", access, "fail_on", fail_on, NULL))) {
        goto done;
    }
    if (tf_tile_pixels(t[0], &t[1], orientation, intent, profile, profile_length, format)) goto done;
    int levels = 1;
    for (int side = VIPS_MAX(t[1]->Xsize, t[1]->Ysize); side > 1; side = (side + 1) / 2)
        levels++;
    /* The smaller levels first, from their own decode (the full size streams once, last). */
    if (levels > 1 && tf_dzsave_reduced(data, length, jxl ? t[0] : NULL, fail_on, intent, profile, profile_length, path, format, suffix,
                                        tile_size, overlap, t[1]->Xsize, t[1]->Ysize, levels, guard)) {
        *reason = guard->reason;
        goto done;
    }
    if (tf_guarded(t[1], &t[2], guard)) goto done;
    result = tf_dzsave_level(t[2], path, levels - 1, suffix, tile_size, overlap);
    if (result)
        *reason = guard->reason;
    else if (levels > 1)
        result = tf_dzsave_rename(path, levels, 0);
done:
    for (int i = 2; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    g_free(guard);
    return result;
}
