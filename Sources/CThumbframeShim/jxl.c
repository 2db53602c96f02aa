#include "tf_jxl.h"

#include <jxl/decode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdr.h"
#include <vips/vips.h>

/* A decoder over `data`, subscribed to `events`, its input closed (the file is whole). */
static JxlDecoder *tf_jxl_open(const void *data, size_t length, int events) {
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    if (!decoder) return NULL;
    if (JxlDecoderSubscribeEvents(decoder, events) != JXL_DEC_SUCCESS || JxlDecoderSetInput(decoder, data, length) != JXL_DEC_SUCCESS) {
        JxlDecoderDestroy(decoder);
        return NULL;
    }
    JxlDecoderCloseInput(decoder);
    return decoder;
}

/* The picture's basic facts and its size as libjxl delivers it (oriented: orientations 5-8 swap
 * the sides): 0; 1 when libjxl cannot say; -1 with a reason when it is over `max_pixels`. */
static int tf_jxl_size(JxlDecoder *decoder, JxlBasicInfo *info, int *w, int *h, long long max_pixels, char *error, size_t error_length) {
    if (JxlDecoderGetBasicInfo(decoder, info) != JXL_DEC_SUCCESS) return 1;
    int swap = info->orientation >= 5;
    *w = (int) (swap ? info->ysize : info->xsize);
    *h = (int) (swap ? info->xsize : info->ysize);
    if (*w <= 0 || *h <= 0 || (long long) *w * *h > max_pixels) {
        snprintf(error, error_length, "%dx%d pixels is over --max-pixels %lld", *w, *h, max_pixels);
        return -1;
    }
    return 0;
}

int tf_jxl_transfer(const void *data, size_t length, int *transfer) {
    *transfer = 0;
    JxlDecoder *decoder = tf_jxl_open(data, length, JXL_DEC_COLOR_ENCODING);
    if (!decoder) return -1;
    // Subscribed to the colour encoding alone, the decoder returns it or an error (the input is whole).
    int result = -1;
    if (JxlDecoderProcessInput(decoder) == JXL_DEC_COLOR_ENCODING) {
        JxlColorEncoding encoding;
        if (JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS)
            *transfer = (int) encoding.transfer_function;
        result = 0;
    }
    JxlDecoderDestroy(decoder);
    return result;
}

int tf_jxl_decode_hdr(const void *data, size_t length, int transfer, int width, int height, long long max_pixels, int gain, TFHdrBox *out,
                      char *error, size_t error_length) {
    memset(out, 0, sizeof *out);
    JxlDecoder *decoder = tf_jxl_open(data, length, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE);
    if (!decoder) {
        snprintf(error, error_length, "libjxl cannot start a decoder");
        return -1;
    }
    JxlPixelFormat format = {3, JXL_TYPE_UINT16, JXL_NATIVE_ENDIAN, 0};
    JxlBasicInfo info;
    uint16_t *signal = NULL;
    int w = 0, h = 0, result = -1, primaries = 9;
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            int sized = tf_jxl_size(decoder, &info, &w, &h, max_pixels, error, error_length);
            if (sized > 0) break;
            if (sized < 0) goto done;
        } else if (status == JXL_DEC_COLOR_ENCODING) {
            // Its primaries as H.273 numbers them (libjxl's P3 is 11, DCI's number: taken as P3).
            JxlColorEncoding encoding;
            if (JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS)
                primaries = encoding.primaries == JXL_PRIMARIES_SRGB ? 1 : encoding.primaries == JXL_PRIMARIES_P3 ? 12 : 9;
        } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t size = 0;
            if (JxlDecoderImageOutBufferSize(decoder, &format, &size) != JXL_DEC_SUCCESS || size != (size_t) w * h * 6 ||
                !(signal = malloc(size)) || JxlDecoderSetImageOutBuffer(decoder, &format, signal, size) != JXL_DEC_SUCCESS) {
                snprintf(error, error_length, "libjxl: cannot take the picture at 16 bits");
                goto done;
            }
        } else if (status == JXL_DEC_FULL_IMAGE) {
            result = tf_hdr_box(signal, w, h, transfer, primaries, width, height, gain, out, error, error_length);
            goto done;
        } else {
            // An error, input that ends early, or the end without a picture.
            snprintf(error, error_length, "libjxl: %s", status == JXL_DEC_NEED_MORE_INPUT ? "the file is cut short" : "cannot decode it");
            goto done;
        }
    }
    snprintf(error, error_length, "libjxl cannot read its header");
done:
    free(signal);
    JxlDecoderDestroy(decoder);
    return result;
}

static void tf_jxl_free_pixels(VipsImage *image, void *pixels) {
    (void) image;
    free(pixels);
}

int tf_jxl_decode_image(const void *data, size_t length, long long max_pixels, VipsImage **out, char *error, size_t error_length) {
    *out = NULL;
    JxlDecoder *decoder = tf_jxl_open(data, length, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE);
    if (!decoder) {
        snprintf(error, error_length, "libjxl cannot start a decoder");
        return -1;
    }
    JxlBasicInfo info;
    JxlPixelFormat format = {0, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    uint8_t *pixels = NULL, *icc = NULL;
    size_t size = 0, icc_size = 0;
    int w = 0, h = 0, bands = 0, result = -1;
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            int sized = tf_jxl_size(decoder, &info, &w, &h, max_pixels, error, error_length);
            if (sized > 0) break;
            if (sized < 0) goto done;
            bands = (int) info.num_color_channels + (info.alpha_bits > 0 ? 1 : 0);
            format.num_channels = (uint32_t) bands;
            format.data_type = info.bits_per_sample > 8 || info.exponent_bits_per_sample > 0 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8;
        } else if (status == JXL_DEC_COLOR_ENCODING) {
            // The profile of the pixels as delivered (an XYB picture's in its original space).
            if (JxlDecoderGetICCProfileSize(decoder, &format, JXL_COLOR_PROFILE_TARGET_DATA, &icc_size) == JXL_DEC_SUCCESS &&
                icc_size > 0 && (icc = malloc(icc_size)) &&
                JxlDecoderGetColorAsICCProfile(decoder, &format, JXL_COLOR_PROFILE_TARGET_DATA, icc, icc_size) != JXL_DEC_SUCCESS) {
                free(icc);
                icc = NULL;
            }
        } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t sample = format.data_type == JXL_TYPE_UINT16 ? 2 : 1;
            if (JxlDecoderImageOutBufferSize(decoder, &format, &size) != JXL_DEC_SUCCESS || size != (size_t) w * h * bands * sample ||
                !(pixels = malloc(size)) || JxlDecoderSetImageOutBuffer(decoder, &format, pixels, size) != JXL_DEC_SUCCESS) {
                snprintf(error, error_length, "libjxl: cannot take the picture (%d bands)", bands);
                goto done;
            }
        } else if (status == JXL_DEC_FULL_IMAGE) {
            int wide = format.data_type == JXL_TYPE_UINT16;
            // The image takes the buffer (no copy of a picture that may be 100 MB), freed with it.
            VipsImage *image = vips_image_new_from_memory(pixels, size, w, h, bands, wide ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR);
            if (!image) {
                snprintf(error, error_length, "out of memory");
                goto done;
            }
            g_signal_connect(image, "postclose", G_CALLBACK(tf_jxl_free_pixels), pixels);
            pixels = NULL;
            int grey = info.num_color_channels == 1;
            image->Type = grey ? (wide ? VIPS_INTERPRETATION_GREY16 : VIPS_INTERPRETATION_B_W)
                               : (wide ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB);
            if (icc) vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, icc, icc_size);
            *out = image;
            result = 0;
            goto done;
        } else {
            // An error, input that ends early, or the end without a picture.
            snprintf(error, error_length, "libjxl: %s", status == JXL_DEC_NEED_MORE_INPUT ? "the file is cut short" : "cannot decode it");
            goto done;
        }
    }
    snprintf(error, error_length, "libjxl cannot read its header");
done:
    free(pixels);
    free(icc);
    JxlDecoderDestroy(decoder);
    return result;
}
