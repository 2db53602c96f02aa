#include "tf_heif.h"

#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdr.h"
#include "tf_kernels.h"
#include "tf_shim.h"

/* Apple's HDR gain map, an auxiliary image of the primary picture (iPhone HEICs since iOS 14.1). */
static const char *const tf_apple_gain_map = "urn:com:apple:photo:2020:aux:hdrgainmap";

/* The context and primary handle of `data`, or -1. */
static int tf_heif_open(const void *data, size_t length, struct heif_context **context, struct heif_image_handle **handle) {
    *context = heif_context_alloc();
    *handle = NULL;
    if (!*context) return -1;
    // The largest side libheif accepts from a header: WebP's 16383 is thumbframe's own default
    // ceiling; --max-pixels is checked by the caller on top.
    heif_context_set_maximum_image_size_limit(*context, 1 << 16);
    struct heif_error error = heif_context_read_from_memory_without_copy(*context, data, length, NULL);
    if (!error.code) error = heif_context_get_primary_image_handle(*context, handle);
    if (error.code) {
        heif_context_free(*context);
        *context = NULL;
        return -1;
    }
    return 0;
}

static void tf_heif_close(struct heif_context *context, struct heif_image_handle *handle) {
    if (handle) heif_image_handle_release(handle);
    if (context) heif_context_free(context);
}

/* The handle of `handle`'s Apple gain map (released by the caller), or NULL. */
static struct heif_image_handle *tf_heif_gain_map_handle(struct heif_image_handle *handle) {
    int count = heif_image_handle_get_number_of_auxiliary_images(handle, LIBHEIF_AUX_IMAGE_FILTER_OMIT_ALPHA);
    if (count <= 0 || count > 64) return NULL;
    heif_item_id ids[64];
    count = heif_image_handle_get_list_of_auxiliary_image_IDs(handle, LIBHEIF_AUX_IMAGE_FILTER_OMIT_ALPHA, ids, count);
    for (int i = 0; i < count; i++) {
        struct heif_image_handle *auxiliary = NULL;
        if (heif_image_handle_get_auxiliary_image_handle(handle, ids[i], &auxiliary).code || !auxiliary) continue;
        const char *type = NULL;
        int found = 0;
        if (!heif_image_handle_get_auxiliary_type(auxiliary, &type).code && type) {
            found = strcmp(type, tf_apple_gain_map) == 0;
            heif_image_handle_free_auxiliary_types(auxiliary, &type);
        }
        if (found) return auxiliary;
        heif_image_handle_release(auxiliary);
    }
    return NULL;
}

int tf_heif_facts(const void *data, size_t length, TFHeifFacts *facts) {
    memset(facts, 0, sizeof *facts);
    struct heif_context *context;
    struct heif_image_handle *handle;
    if (tf_heif_open(data, length, &context, &handle)) return -1;
    facts->width = heif_image_handle_get_width(handle);
    facts->height = heif_image_handle_get_height(handle);
    facts->bits = heif_image_handle_get_luma_bits_per_pixel(handle);
    struct heif_color_profile_nclx *nclx = NULL;
    if (!heif_image_handle_get_nclx_color_profile(handle, &nclx).code && nclx) {
        facts->nclx = 1;
        facts->transfer = nclx->transfer_characteristics;
        facts->primaries = nclx->color_primaries;
        heif_nclx_color_profile_free(nclx);
    }
    struct heif_image_handle *gain_map = tf_heif_gain_map_handle(handle);
    facts->gain_map = gain_map != NULL;
    if (gain_map) heif_image_handle_release(gain_map);
    tf_heif_close(context, handle);
    return 0;
}

int tf_heif_gain_map(const void *data, size_t length, long long max_pixels, uint8_t **map, int *width, int *height, char *error,
                     size_t error_length) {
    *map = NULL;
    *width = *height = 0;
    struct heif_context *context;
    struct heif_image_handle *handle, *auxiliary = NULL;
    struct heif_image *picture = NULL;
    int result = -1;
    error[0] = 0;
    if (tf_heif_open(data, length, &context, &handle)) {
        snprintf(error, error_length, "libheif cannot read the container");
        return -1;
    }
    if (!(auxiliary = tf_heif_gain_map_handle(handle))) goto done;
    int w = heif_image_handle_get_width(auxiliary), h = heif_image_handle_get_height(auxiliary);
    if (w <= 0 || h <= 0 || (long long) w * h > max_pixels) {
        snprintf(error, error_length, "a gain map of %dx%d pixels", w, h);
        goto done;
    }
    struct heif_error failed = heif_decode_image(auxiliary, &picture, heif_colorspace_monochrome, heif_chroma_monochrome, NULL);
    if (failed.code) {
        snprintf(error, error_length, "libheif: %s", failed.message);
        goto done;
    }
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(picture, heif_channel_Y, &stride);
    w = heif_image_get_width(picture, heif_channel_Y);
    h = heif_image_get_height(picture, heif_channel_Y);
    if (!plane || w <= 0 || h <= 0 || heif_image_get_bits_per_pixel_range(picture, heif_channel_Y) != 8) {
        snprintf(error, error_length, "the gain map is not 8-bit grey");
        goto done;
    }
    if (!(*map = malloc((size_t) w * h))) {
        snprintf(error, error_length, "out of memory");
        goto done;
    }
    for (int y = 0; y < h; y++)
        memcpy(*map + (size_t) y * w, plane + (size_t) y * stride, (size_t) w);
    *width = w;
    *height = h;
    result = 0;
done:
    if (picture) heif_image_release(picture);
    if (auxiliary) heif_image_handle_release(auxiliary);
    tf_heif_close(context, handle);
    return result;
}

int tf_heif_decode_hdr(const void *data, size_t length, int transfer, int width, int height, long long max_pixels, int gain, TFHdrBox *out,
                       char *error, size_t error_length) {
    memset(out, 0, sizeof *out);
    struct heif_context *context;
    struct heif_image_handle *handle;
    struct heif_image *picture = NULL;
    uint16_t *signal = NULL;
    int result = -1;
    if (tf_heif_open(data, length, &context, &handle)) {
        snprintf(error, error_length, "libheif cannot read the container");
        return -1;
    }
    int w = heif_image_handle_get_width(handle), h = heif_image_handle_get_height(handle);
    if (w <= 0 || h <= 0 || (long long) w * h > max_pixels) {
        snprintf(error, error_length, "%dx%d pixels is over --max-pixels %lld", w, h, max_pixels);
        goto done;
    }
    int bits = heif_image_handle_get_luma_bits_per_pixel(handle);
    int deep = bits > 8;
    struct heif_error failed = heif_decode_image(handle, &picture, heif_colorspace_RGB,
                                                 deep ? heif_chroma_interleaved_RRGGBB_LE : heif_chroma_interleaved_RGB, NULL);
    if (failed.code) {
        snprintf(error, error_length, "libheif: %s", failed.message);
        goto done;
    }
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(picture, heif_channel_interleaved, &stride);
    if (!plane || heif_image_get_width(picture, heif_channel_interleaved) != w ||
        heif_image_get_height(picture, heif_channel_interleaved) != h) {
        snprintf(error, error_length, "libheif decoded a picture of another size than its header's");
        goto done;
    }
    // The signal in 16 bits, full scale: 10-bit code 1023 is 65535, as the tone map reads it.
    if (!(signal = malloc((size_t) w * h * 3 * sizeof *signal))) {
        snprintf(error, error_length, "out of memory");
        goto done;
    }
    int maximum = deep ? (1 << bits) - 1 : 255;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = plane + (size_t) y * stride;
        uint16_t *target = signal + (size_t) y * w * 3;
        for (int x = 0; x < w * 3; x++) {
            unsigned value = deep ? (unsigned) (row[2 * x] | row[2 * x + 1] << 8) : row[x];
            if (value > (unsigned) maximum) value = maximum;
            target[x] = (uint16_t) ((value * 65535u + maximum / 2) / maximum);
        }
    }
    heif_image_release(picture);
    picture = NULL;
    // The primaries the picture's nclx says (BT.2020 where it says none).
    int primaries = 9;
    struct heif_color_profile_nclx *nclx = NULL;
    if (!heif_image_handle_get_nclx_color_profile(handle, &nclx).code && nclx) {
        primaries = nclx->color_primaries;
        heif_nclx_color_profile_free(nclx);
    }
    result = tf_hdr_box(signal, w, h, transfer, primaries, width, height, gain, out, error, error_length);
done:
    free(signal);
    if (picture) heif_image_release(picture);
    tf_heif_close(context, handle);
    return result;
}
