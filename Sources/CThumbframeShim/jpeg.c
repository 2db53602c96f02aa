/* JPEG thumbnails encoded with libjpeg in the calling thread: the bytes libvips 8.14's
 * jpegsave writes with "strip" (same libjpeg, same parameters: defaults, the quality's scaled
 * tables, no chroma subsampling from Q 90, no JFIF header or other marker, progressive when
 * asked), without its sink's thread pool and write-behind thread. A small file's three saves
 * were most of the thread hand-offs left in its build. */
#include "tf_shim.h"

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
    if (setjmp(error.jump))
        goto done;
    jpeg_mem_dest(&cinfo, &memory, &size);
    cinfo.image_width = in->Xsize;
    cinfo.image_height = in->Ysize;
    cinfo.input_components = in->Bands;
    cinfo.in_color_space = in->Bands == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (interlace)
        jpeg_simple_progression(&cinfo);
    if (quality >= 90)
        for (int i = 0; i < in->Bands; i++) {
            cinfo.comp_info[i].h_samp_factor = 1;
            cinfo.comp_info[i].v_samp_factor = 1;
        }
    cinfo.write_JFIF_header = FALSE;
    jpeg_start_compress(&cinfo, TRUE);
    if (!(region = vips_region_new(in)))
        goto done;
    const int strip = 16;
    for (int top = 0; top < in->Ysize; top += strip) {
        VipsRect rect = { 0, top, in->Xsize, VIPS_MIN(strip, in->Ysize - top) };
        if (vips_region_prepare(region, &rect))
            goto done;
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
    if (region)
        g_object_unref(region);
    jpeg_destroy_compress(&cinfo);
    free(memory);
    return result;
}
