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

/* A picture libjxl decoded whole, oriented. */
typedef struct {
    JxlBasicInfo info;
    int w, h, bands, wide;
    int primaries; /* H.273 colour primaries of its encoding (9 when it says none libjxl names) */
    void *pixels;  /* w * h * bands samples of 1 or 2 (wide) bytes */
    size_t size;
    uint8_t *icc; /* the profile of the pixels as delivered, or NULL */
    size_t icc_size;
} TFJxlPicture;

static void tf_jxl_picture_free(TFJxlPicture *picture) {
    free(picture->pixels);
    free(picture->icc);
    memset(picture, 0, sizeof *picture);
}

/* Decodes the whole file: `rgb16` three 16-bit channels whatever the picture (the HDR path's
 * signal), else its own channels (alpha kept) at 8 or 16 bits (float samples as 16). More than
 * `max_pixels` is refused before the decode. 0, or -1 with a one-line reason. */
static int tf_jxl_decode(const void *data, size_t length, long long max_pixels, int rgb16, TFJxlPicture *p, char *error,
                         size_t error_length) {
    memset(p, 0, sizeof *p);
    p->primaries = 9;
    JxlDecoder *decoder = tf_jxl_open(data, length, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE);
    if (!decoder) {
        snprintf(error, error_length, "libjxl cannot start a decoder");
        return -1;
    }
    JxlPixelFormat format = {3, JXL_TYPE_UINT16, JXL_NATIVE_ENDIAN, 0};
    int result = -1;
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            int sized = tf_jxl_size(decoder, &p->info, &p->w, &p->h, max_pixels, error, error_length);
            if (sized > 0) break;
            if (sized < 0) goto done;
            if (!rgb16) {
                format.num_channels = p->info.num_color_channels + (p->info.alpha_bits > 0 ? 1 : 0);
                format.data_type = p->info.bits_per_sample > 8 || p->info.exponent_bits_per_sample > 0 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8;
            }
            p->bands = (int) format.num_channels;
            p->wide = format.data_type == JXL_TYPE_UINT16;
        } else if (status == JXL_DEC_COLOR_ENCODING) {
            // Its primaries as H.273 numbers them (libjxl's P3 is 11, DCI's number: taken as P3).
            JxlColorEncoding encoding;
            if (JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS)
                p->primaries = encoding.primaries == JXL_PRIMARIES_SRGB ? 1 : encoding.primaries == JXL_PRIMARIES_P3 ? 12 : 9;
            // The profile of the pixels as delivered (an XYB picture's in its original space).
            if (JxlDecoderGetICCProfileSize(decoder, &format, JXL_COLOR_PROFILE_TARGET_DATA, &p->icc_size) == JXL_DEC_SUCCESS &&
                p->icc_size > 0 && (p->icc = malloc(p->icc_size)) &&
                JxlDecoderGetColorAsICCProfile(decoder, &format, JXL_COLOR_PROFILE_TARGET_DATA, p->icc, p->icc_size) != JXL_DEC_SUCCESS) {
                free(p->icc);
                p->icc = NULL;
            }
        } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t expected = (size_t) p->w * p->h * p->bands * (p->wide ? 2 : 1);
            if (JxlDecoderImageOutBufferSize(decoder, &format, &p->size) != JXL_DEC_SUCCESS || p->size != expected ||
                !(p->pixels = malloc(p->size)) || JxlDecoderSetImageOutBuffer(decoder, &format, p->pixels, p->size) != JXL_DEC_SUCCESS) {
                snprintf(error, error_length, "libjxl: cannot take the picture (%d bands of %d bits)", p->bands, p->wide ? 16 : 8);
                goto done;
            }
        } else if (status == JXL_DEC_FULL_IMAGE) {
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
    if (result) tf_jxl_picture_free(p);
    JxlDecoderDestroy(decoder);
    return result;
}

int tf_jxl_decode_hdr(const void *data, size_t length, int transfer, int width, int height, long long max_pixels, int gain, TFHdrBox *out,
                      char *error, size_t error_length) {
    memset(out, 0, sizeof *out);
    TFJxlPicture picture;
    if (tf_jxl_decode(data, length, max_pixels, 1, &picture, error, error_length)) return -1;
    int result =
        tf_hdr_box(picture.pixels, picture.w, picture.h, transfer, picture.primaries, width, height, gain, out, error, error_length);
    tf_jxl_picture_free(&picture);
    return result;
}

static void tf_jxl_free_pixels(VipsImage *image, void *pixels) {
    (void) image;
    free(pixels);
}

int tf_jxl_decode_image(const void *data, size_t length, long long max_pixels, VipsImage **out, char *error, size_t error_length) {
    *out = NULL;
    TFJxlPicture picture;
    if (tf_jxl_decode(data, length, max_pixels, 0, &picture, error, error_length)) return -1;
    // The image takes the buffer (no copy of a picture that may be 100 MB), freed with it.
    VipsImage *image = vips_image_new_from_memory(picture.pixels, picture.size, picture.w, picture.h, picture.bands,
                                                  picture.wide ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR);
    if (!image) {
        snprintf(error, error_length, "out of memory");
        tf_jxl_picture_free(&picture);
        return -1;
    }
    g_signal_connect(image, "postclose", G_CALLBACK(tf_jxl_free_pixels), picture.pixels);
    picture.pixels = NULL;
    int grey = picture.info.num_color_channels == 1;
    image->Type = grey ? (picture.wide ? VIPS_INTERPRETATION_GREY16 : VIPS_INTERPRETATION_B_W)
                       : (picture.wide ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB);
    if (picture.icc) vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, picture.icc, picture.icc_size);
    tf_jxl_picture_free(&picture);
    *out = image;
    return 0;
}
