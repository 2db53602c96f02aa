/* Deep-zoom tiles: libvips' dzsave over the full-resolution image, upright, sRGB and without
 * metadata, under the file's deadline and the build's stop flag. */
#include "tf_shim.h"
#include "guard.h"

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
    if (vips_copy(in, out, NULL))
        return -1;
    gchar **fields = vips_image_get_fields(*out);
    for (int i = 0; fields[i]; i++)
        (void) vips_image_remove(*out, fields[i]);
    g_strfreev(fields);
    return 0;
}

int tf_dzsave(
    const void *data, size_t length, int fail_on, int orientation, int intent, const char *path, int format, int quality,
    int tile_size, int overlap, double timeout_seconds, const int *stop, int *reason) {
    *reason = TF_STOP_NONE;
    TFGuard *guard = g_new0(TFGuard, 1);
    guard->stop = stop;
    if (timeout_seconds > 0)
        guard->deadline = g_get_monotonic_time() + (gint64) (timeout_seconds * 1e6);
    /* Upright only streams when nothing turns it: any rotation reads the whole image (libvips
     * holds it in memory, or in a temporary file past its disc threshold). */
    VipsAccess access = orientation == 1 ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM;
    VipsImage *t[6] = { NULL };
    int result = -1;
    if (!(t[0] = vips_image_new_from_buffer(data, length, "", "access", access, "fail_on", fail_on, NULL)))
        goto done;
    if (tf_to_srgb_with(t[0], &t[1], intent))
        goto done;
    if (orientation == 1) {
        t[2] = t[1];
        g_object_ref(t[2]);
    } else if (tf_autorot(t[1], &t[2], orientation)) {
        goto done;
    }
    if (format == TF_FORMAT_JPEG && vips_image_hasalpha(t[2])) {
        if (tf_flatten_white(t[2], &t[3]))
            goto done;
    } else {
        t[3] = t[2];
        g_object_ref(t[3]);
    }
    if (tf_without_metadata(t[3], &t[4]) || tf_guarded(t[4], &t[5], guard))
        goto done;
    g_object_set_data_full(G_OBJECT(t[5]), "tf-guard", guard, g_free);
    guard = NULL;
    char suffix[64];
    g_snprintf(suffix, sizeof suffix, "%s[Q=%d,strip]", format == TF_FORMAT_WEBP ? ".webp" : ".jpg", quality);
    result = vips_dzsave(
        t[5], path, "layout", VIPS_FOREIGN_DZ_LAYOUT_DZ, "suffix", suffix, "tile_size", tile_size, "overlap", overlap,
        "depth", VIPS_FOREIGN_DZ_DEPTH_ONEPIXEL, NULL);
    TFGuard *used = g_object_get_data(G_OBJECT(t[5]), "tf-guard");
    if (result && used)
        *reason = used->reason;
done:
    for (int i = 5; i >= 0; i--)
        if (t[i])
            g_object_unref(t[i]);
    g_free(guard);
    return result;
}
