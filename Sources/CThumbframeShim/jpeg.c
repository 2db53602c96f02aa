/* JPEG thumbnails encoded with libjpeg in the calling thread: the bytes libvips 8.14's
 * jpegsave writes with "strip" (same libjpeg, same parameters: defaults, the quality's scaled
 * tables, no chroma subsampling from Q 90, no JFIF header or other marker, progressive when
 * asked), without its sink's thread pool and write-behind thread. A small file's three saves
 * were most of the thread hand-offs left in its build. */
#include "tf_shim.h"
#include "guard.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} TFJpegError;

static void tf_jpeg_error_exit(j_common_ptr cinfo) {
    TFJpegError *error = (TFJpegError *) cinfo->err;
    char message[JMSG_LENGTH_MAX];
    cinfo->err->format_message(cinfo, message);
    vips_error("thumbframe", "jpeg: %s", message);
    longjmp(error->jump, 1);
}

static void tf_jpeg_silent(j_common_ptr cinfo, int level) {
    (void) cinfo;
    (void) level;
}

int tf_jpegsave_libvips(VipsImage *in, int quality, int interlace, void **buffer, size_t *length) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, "interlace", interlace ? TRUE : FALSE, NULL);
}

int tf_jpegsave_here(VipsImage *in, int quality, int interlace, void **buffer, size_t *length) {
    /* What libvips would first convert (other formats, bands, codings) goes through libvips. */
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || (in->Bands != 1 && in->Bands != 3) ||
        in->Xsize > JPEG_MAX_DIMENSION || in->Ysize > JPEG_MAX_DIMENSION)
        return tf_jpegsave_libvips(in, quality, interlace, buffer, length);
    struct jpeg_compress_struct cinfo;
    TFJpegError error;
    unsigned char *memory = NULL;
    unsigned long size = 0;
    /* volatile: set after setjmp and read after a longjmp. */
    VipsRegion *volatile region = NULL;
    volatile int result = -1;
    cinfo.err = jpeg_std_error(&error.base);
    error.base.error_exit = tf_jpeg_error_exit;
    error.base.emit_message = tf_jpeg_silent;
    jpeg_create_compress(&cinfo);
    if (setjmp(error.jump)) goto done;
    jpeg_mem_dest(&cinfo, &memory, &size);
    cinfo.image_width = in->Xsize;
    cinfo.image_height = in->Ysize;
    cinfo.input_components = in->Bands;
    cinfo.in_color_space = in->Bands == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (interlace) jpeg_simple_progression(&cinfo);
    if (quality >= 90)
        for (int i = 0; i < in->Bands; i++) {
            cinfo.comp_info[i].h_samp_factor = 1;
            cinfo.comp_info[i].v_samp_factor = 1;
        }
    cinfo.write_JFIF_header = FALSE;
    jpeg_start_compress(&cinfo, TRUE);
    if (!(region = vips_region_new(in))) goto done;
    const int strip = 16;
    for (int top = 0; top < in->Ysize; top += strip) {
        VipsRect rect = {0, top, in->Xsize, VIPS_MIN(strip, in->Ysize - top)};
        if (vips_region_prepare(region, &rect)) goto done;
        for (int y = rect.top; y < rect.top + rect.height; y++) {
            JSAMPROW row = (JSAMPROW) VIPS_REGION_ADDR(region, 0, y);
            jpeg_write_scanlines(&cinfo, &row, 1);
        }
    }
    jpeg_finish_compress(&cinfo);
    if (!(*buffer = g_try_malloc(size))) {
        vips_error("thumbframe", "out of memory");
        goto done;
    }
    memcpy(*buffer, memory, size);
    *length = size;
    result = 0;
done:
    if (region) g_object_unref(region);
    jpeg_destroy_compress(&cinfo);
    free(memory);
    return result;
}

/* The decode of a baseline JPEG read with libjpeg straight into a memory image, in the calling
 * thread: what libvips 8.14's jpegload with "shrink" gives (its parameters are libjpeg's
 * defaults; the ICC profile assembled from APP2 "ICC_PROFILE" sections as it does), without its
 * loader, sequential cache and region objects. Anything it does not handle, and every warning or
 * error, is left to libvips, which then decides what the file is (so a damaged file fails with
 * libvips' own message). */
/* The decoder's error manager is the encoder's TFJpegError, with handlers that leave no message:
 * an error or a warning only hands the file to libvips. */
static void tf_jpeg_bail(j_common_ptr cinfo) { longjmp(((TFJpegError *) cinfo->err)->jump, 1); }

static void tf_jpeg_bail_on_warning(j_common_ptr cinfo, int level) {
    if (level < 0) tf_jpeg_bail(cinfo);
}

enum { TF_ICC_SECTIONS = 100 }; /* libvips' MAX_APP2_SECTIONS */

/* libvips' assembly: sections in their sequence numbers' places, taken while contiguous from 1. */
static void tf_jpeg_attach_icc(j_decompress_ptr cinfo, VipsImage *image) {
    const unsigned char *sections[TF_ICC_SECTIONS] = {0};
    size_t lengths[TF_ICC_SECTIONS] = {0};
    for (jpeg_saved_marker_ptr p = cinfo->marker_list; p; p = p->next) {
        if (p->marker != JPEG_APP0 + 2 || p->data_length <= 14 || memcmp(p->data, "ICC_PROFILE", 11) != 0) continue;
        const int index = p->data[12] - 1;
        if (index >= 0 && index < TF_ICC_SECTIONS) {
            sections[index] = p->data + 14;
            lengths[index] = p->data_length - 14;
        }
    }
    size_t total = 0;
    for (int i = 0; i < TF_ICC_SECTIONS && sections[i]; i++)
        total += lengths[i];
    if (!total) return;
    unsigned char *profile = g_malloc(total);
    size_t at = 0;
    for (int i = 0; i < TF_ICC_SECTIONS && sections[i]; i++) {
        memcpy(profile + at, sections[i], lengths[i]);
        at += lengths[i];
    }
    vips_image_set_blob(image, VIPS_META_ICC_NAME, (VipsCallbackFn) g_free, profile, total);
}

int tf_jpeg_decode_here(const void *data, size_t length, int shrink, double timeout_seconds, const int *stop, VipsImage **out,
                        int *reason) {
    struct jpeg_decompress_struct cinfo;
    TFJpegError bail;
    TFGuard guard = {0, stop, TF_STOP_NONE};
    if (timeout_seconds > 0) guard.deadline = g_get_monotonic_time() + (gint64) (timeout_seconds * 1e6);
    /* volatile: set after setjmp and read after a longjmp. */
    VipsImage *volatile image = NULL;
    unsigned char *volatile scratch = NULL;
    volatile int result = 0;
    *reason = TF_STOP_NONE;
    cinfo.err = jpeg_std_error(&bail.base);
    bail.base.error_exit = tf_jpeg_bail;
    bail.base.emit_message = tf_jpeg_bail_on_warning;
    jpeg_create_decompress(&cinfo);
    if (setjmp(bail.jump)) {
        result = 0;
        goto done;
    }
    jpeg_mem_src(&cinfo, data, (unsigned long) length);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 2, 0xffff);
    if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK || cinfo.progressive_mode ||
        (cinfo.out_color_space != JCS_RGB && cinfo.out_color_space != JCS_GRAYSCALE))
        goto done;
    cinfo.scale_num = 1;
    cinfo.scale_denom = shrink;
    jpeg_start_decompress(&cinfo);
    const int bands = cinfo.output_components;
    /* libvips keeps floor(side / shrink) of libjpeg's ceil(side / shrink): the partial last
     * column and row are cut off. */
    const int width = (int) (cinfo.image_width / (unsigned) shrink);
    const int height = (int) (cinfo.image_height / (unsigned) shrink);
    if ((bands != 3 && bands != 1) || width < 1 || height < 1) goto done;
    /* Every row below `height` is written: a pooled buffer's earlier pixels never show. */
    if (!(image = tf_pool_image(width, height, bands, VIPS_FORMAT_UCHAR))) goto done;
    vips_image_init_fields(image, width, height, bands, VIPS_FORMAT_UCHAR, VIPS_CODING_NONE,
                           bands == 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W, 72.0 / 25.4, 72.0 / 25.4);
    /* Demanded in strips, as libvips' own JPEG decode is: pipelines from it take their demand
     * style from it (a new image defaults to small tiles). */
    if (vips_image_pipelinev(image, VIPS_DEMAND_STYLE_FATSTRIP, NULL)) goto done;
    /* The saved markers live until jpeg_finish_decompress frees them. */
    tf_jpeg_attach_icc(&cinfo, image);
    const size_t line = (size_t) cinfo.output_width * bands;
    const size_t kept = (size_t) width * bands;
    scratch = g_malloc(line * 8);
    while (cinfo.output_scanline < cinfo.output_height) {
        /* The guard between bands of rows: a decode cannot outlast its deadline by much. */
        if (tf_guard_stops(&guard)) {
            *reason = guard.reason;
            result = -1;
            goto done;
        }
        const int first = (int) cinfo.output_scanline;
        const int count = (int) VIPS_MIN(8, cinfo.output_height - cinfo.output_scanline);
        JSAMPROW rows[8];
        for (int i = 0; i < count; i++)
            rows[i] = line == kept && first + i < height ? VIPS_IMAGE_ADDR(image, 0, first + i) : scratch + i * line;
        const int read = (int) jpeg_read_scanlines(&cinfo, rows, count);
        if (line != kept)
            for (int i = 0; i < read && first + i < height; i++)
                memcpy(VIPS_IMAGE_ADDR(image, 0, first + i), scratch + i * line, kept);
    }
    jpeg_finish_decompress(&cinfo);
    *out = image;
    image = NULL;
    result = 1;
done:
    jpeg_destroy_decompress(&cinfo);
    g_free(scratch);
    if (image) g_object_unref(image);
    return result;
}
