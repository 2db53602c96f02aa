#include <time.h>
#include <dlfcn.h>
#include "tf_shim.h"
#include "guard.h"
#include "tf_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <libexif/exif-utils.h>
#include <lcms2.h>

/* libssh (which Debian's libavformat links for sftp://) sets up libgcrypt's secure memory from
 * its constructor, before main; where memory may not be locked (`ulimit -l 0`, an unprivileged
 * service) libgcrypt then prints "Warning: using insecure memory!" on every start, which cron
 * mails. An executable's preinit functions run before any library's constructor: the warning is
 * turned off there (GCRYCTL_DISABLE_SECMEM_WARN, 27 in gcrypt.h; libgcrypt holds no secret of
 * thumbframe's, which hashes with OpenSSL), through dlsym, so nothing links libgcrypt for it. */
static void tf_quiet_gcrypt(int argc, char **argv, char **envp) {
    (void) argc;
    (void) argv;
    (void) envp;
    typedef unsigned int (*TFGcryControl)(int, ...);
    TFGcryControl control = (TFGcryControl) dlsym(RTLD_DEFAULT, "gcry_control");
    if (control) control(27, 0);
}
__attribute__((section(".preinit_array"), used)) static void (*const tf_preinit[])(int, char **, char **) = {tf_quiet_gcrypt};

/* The define is a bare token sequence (no quotes to survive the shells between), made a string here. */
#define TF_STRING_OF(x) #x
#define TF_STRING(x) TF_STRING_OF(x)

const char *tf_build_version(void) {
#ifdef TF_BUILD_VERSION
    return TF_STRING(TF_BUILD_VERSION);
#else
    return NULL;
#endif
}

/* Drops the references a function's temporaries hold (NULL slots are skipped). */
static void tf_unref_all(VipsImage **images, int count) {
    for (int i = 0; i < count; i++)
        if (images[i]) g_object_unref(images[i]);
}

static void tf_discard_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void) domain;
    (void) level;
    (void) message;
    (void) data;
}

int tf_vips_start(const char *argv0) {
    if (VIPS_INIT(argv0)) return -1;
    // libvips reports decode trouble twice: in its error buffer, which the failing call's caller
    // turns into a failure entry naming the file, and as g_warning lines on stderr that name no
    // file and interleave across workers. Keep the first only.
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, tf_discard_log, NULL);
    // A batch opens every file once: caching operations would only hold memory.
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    // Loaders built on large, fuzz-unhardened libraries (ImageMagick, PDFium, ...) stay off.
    vips_block_untrusted_set(TRUE);
    // Except JPEG XL: libvips 8.14 marks its loader untrusted, yet libjxl is fuzzed
    // continuously (OSS-Fuzz) and its decoder checks its own sizes; the picture it decodes at
    // once is counted against --max-pixels and --max-decode-bytes from the header (README,
    // "JPEG XL").
    vips_operation_block_set("VipsForeignLoadJxl", FALSE);
    return 0;
}

VipsImage *tf_image_new_from_buffer(const void *data, size_t length, int fail_on) {
    return vips_image_new_from_buffer(data, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", (VipsFailOn) fail_on, NULL);
}

int tf_image_from_buffer(const void *data, size_t length, VipsImage **out, int fail_on) {
    *out = tf_image_new_from_buffer(data, length, fail_on);
    return *out ? 0 : -1;
}

int tf_page_size(const void *data, size_t length, int page, int *width, int *height) {
    VipsImage *image = vips_image_new_from_buffer(data, length, "", "page", page, NULL);
    if (!image) return -1;
    *width = image->Xsize;
    *height = image->Ysize;
    g_object_unref(image);
    return 0;
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
    return vips_thumbnail_buffer((void *) data, length, out, width, "height", height, "size", VIPS_SIZE_FORCE, "option_string", options,
                                 NULL);
}

int tf_jpeg_load_shrunk(const void *data, size_t length, VipsImage **out, int shrink, int fail_on) {
    return vips_jpegload_buffer((void *) data, length, out, "shrink", shrink, "fail_on", (VipsFailOn) fail_on, "access",
                                VIPS_ACCESS_SEQUENTIAL, NULL);
}

/* The input of a progressive JPEG's decode, handed to libjpeg in small reads that stop at the
 * deadline. Owned by the custom source (freed with it). */
typedef struct {
    const unsigned char *data;
    gint64 length;
    gint64 at;
    gint64 deadline;
    const int *stop;
} TFTimedInput;

static gint64 tf_timed_read(VipsSourceCustom *source, void *buffer, gint64 length, TFTimedInput *input) {
    (void) source;
    if ((input->stop && __atomic_load_n(input->stop, __ATOMIC_RELAXED)) || (input->deadline && g_get_monotonic_time() > input->deadline))
        return 0; /* end of input: libjpeg inserts EOI and stops consuming scans */
    gint64 n = VIPS_MIN(VIPS_MIN(length, 1024), input->length - input->at);
    if (n <= 0) return 0;
    memcpy(buffer, input->data + input->at, n);
    input->at += n;
    return n;
}

static gint64 tf_timed_seek(VipsSourceCustom *source, gint64 offset, int whence, TFTimedInput *input) {
    (void) source;
    gint64 position = whence == SEEK_SET ? offset : whence == SEEK_CUR ? input->at + offset : input->length + offset;
    if (position < 0 || position > input->length) return -1;
    input->at = position;
    return position;
}

int tf_jpeg_load_shrunk_deadline(const void *data, size_t length, VipsImage **out, int shrink, int fail_on, double timeout_seconds,
                                 const int *stop) {
    TFTimedInput *input = g_new0(TFTimedInput, 1);
    input->data = data;
    input->length = (gint64) length;
    input->stop = stop;
    if (timeout_seconds > 0) input->deadline = g_get_monotonic_time() + (gint64) (timeout_seconds * 1e6);
    VipsSourceCustom *source = vips_source_custom_new();
    g_object_set_data_full(G_OBJECT(source), "tf-timed-input", input, g_free);
    g_signal_connect(source, "read", G_CALLBACK(tf_timed_read), input);
    g_signal_connect(source, "seek", G_CALLBACK(tf_timed_seek), input);
    int result = vips_jpegload_source(VIPS_SOURCE(source), out, "shrink", shrink, "fail_on", (VipsFailOn) fail_on, "access",
                                      VIPS_ACCESS_SEQUENTIAL, NULL);
    g_object_unref(source); /* the loader holds its own reference while the image lives */
    return result;
}

/* Lanczos3 the fast way for 8-bit images without alpha. libvips 8.14 vectorises its vertical
 * reduction (reducev, through ORC) but not its horizontal one (reduceh, a plain C loop). So the
 * vertical pass stays libvips' (lazily, as the decoder streams rows), and the horizontal pass
 * runs on the pixels in memory through CThumbframeKernels: transpose, a vertical Lanczos3 in
 * exact 32-bit arithmetic two rows at a time (SSE2 where there is SSE2), transpose back.
 * scripts/benchmarks/kernel-speed measures it against reduceh on the same pixels, one thread each: 2.0-2.6x
 * as fast on this project's machine (3000 x 853 -> 1280: 15.6 against 30.6 ms), and within one
 * step of 255 of it. It is never further from a floating-point Lanczos3 than vips_resize (the
 * pixel test "the fast Lanczos3 …" holds it to that). libvips' reducev on the transpose would be
 * as fast but is less exact (its 16-bit passes cost 1.5-3 dB against a floating-point Lanczos3,
 * which showed in the bench's quality table as grids below vipsthumbnail's). */
static gboolean tf_lanczos_fast(VipsImage *in) {
    return in->BandFmt == VIPS_FORMAT_UCHAR && in->Coding == VIPS_CODING_NONE && in->Bands <= 4 && !vips_image_hasalpha(in);
}

static gboolean tf_in_memory(VipsImage *in) {
    return (in->dtype == VIPS_IMAGE_SETBUF || in->dtype == VIPS_IMAGE_SETBUF_FOREIGN) && in->data;
}

/* A new image in memory with `in`'s format and metadata and the given size, its pixels
 * allocated for the caller to fill; NULL on failure. */
static VipsImage *tf_memory_like(VipsImage *in, int width, int height) {
    VipsImage *t = tf_pool_image(width, height, in->Bands, in->BandFmt);
    if (!t) return NULL;
    if (vips_image_pipelinev(t, VIPS_DEMAND_STYLE_ANY, in, NULL)) {
        g_object_unref(t);
        return NULL;
    }
    t->Xsize = width;
    t->Ysize = height;
    return t;
}

int tf_transpose(VipsImage *in, VipsImage **out) {
    if (!tf_in_memory(in) || in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE) {
        vips_error("thumbframe", "transpose needs an 8-bit image in memory");
        return -1;
    }
    VipsImage *t = tf_memory_like(in, in->Ysize, in->Xsize);
    if (!t) return -1;
    t->Xres = in->Yres;
    t->Yres = in->Xres;
    tfk_transpose(in->data, t->data, in->Xsize, in->Ysize, in->Bands);
    *out = t;
    return 0;
}

/* Exactly width x height: the centre where the image is larger (a cover's crop, a rounded-up
 * side), the edge repeated where it is smaller (a rounded-down side). */
static int tf_exact_size(VipsImage *in, VipsImage **out, int width, int height) {
    VipsImage *t[2] = {NULL};
    int result = -1;
    VipsImage *current = in;
    const int cw = VIPS_MIN(width, current->Xsize);
    const int ch = VIPS_MIN(height, current->Ysize);
    if (cw != current->Xsize || ch != current->Ysize) {
        if (vips_crop(current, &t[0], (current->Xsize - cw) / 2, (current->Ysize - ch) / 2, cw, ch, NULL)) goto done;
        current = t[0];
    }
    if (current->Xsize != width || current->Ysize != height) {
        if (vips_embed(current, &t[1], 0, 0, width, height, "extend", VIPS_EXTEND_COPY, NULL)) goto done;
        current = t[1];
    }
    g_object_ref(current);
    *out = current;
    result = 0;
done:
    tf_unref_all(t, 2);
    return result;
}

int tf_extract(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

/* Whether a reduction by these scales takes CThumbframeKernels' exact Lanczos3: 8 bits in memory,
 * no alpha, at most 16 on each axis (beyond that the 14-bit weights get coarse: libvips' path). */
static gboolean tf_exact_applies(VipsImage *in, double hscale, double vscale) {
    return hscale <= 1 && vscale <= 1 && hscale >= 1.0 / 16 && vscale >= 1.0 / 16 && tf_lanczos_fast(in) && tf_in_memory(in);
}

static int tf_resize_gap(VipsImage *in, VipsImage **out, int width, int height, int crop, double gap) {
    VipsImage *t[8] = {NULL};
    int result = -1;
    double hscale = (double) width / in->Xsize;
    double vscale = (double) height / in->Ysize;
    if (crop) hscale = vscale = VIPS_MAX(hscale, vscale);
    VipsImage *current = in;
    VipsBandFormat format = in->BandFmt;
    gboolean alpha = vips_image_hasalpha(in);
    if (gap == 0.0 && tf_exact_applies(in, hscale, vscale)) {
        // The sizes vips_resize gives, then the same crop or edge as below.
        const int w = crop ? VIPS_MAX(1, (int) rint(in->Xsize * hscale)) : width;
        const int h = crop ? VIPS_MAX(1, (int) rint(in->Ysize * vscale)) : height;
        // Each axis by the scale vips_resize uses (for a cover, the same on both), not by the
        // ratio of the rounded sizes, so a cover keeps the source's aspect ratio. Only what the
        // centre crop keeps is computed: its rows, and the columns its columns read. Down the
        // columns first (no transpose; the larger pass over the larger image), then along the rows.
        const int top = h > height ? (h - height) / 2 : 0, rows = VIPS_MIN(h, height);
        const int left = w > width ? (w - width) / 2 : 0, cols = VIPS_MIN(w, width);
        int from = left, to = left + cols;
        if (w != in->Xsize) tfk_lanczos3_span(in->Xsize, w, 1.0 / hscale, left, cols, &from, &to);
        const int bands = in->Bands;
        const size_t stride = VIPS_IMAGE_SIZEOF_LINE(in), band = (size_t) (to - from) * bands;
        const unsigned char *start = VIPS_IMAGE_ADDR(in, from, 0);
        if (w != in->Xsize) {
            // Down the columns, each run of output rows transposed as it is made (t[4]'s rows
            // are input columns `from` … `to`); then along the rows as down the columns of that
            // transpose (the kept output columns read nothing else), and back. A pass's input is
            // let go as soon as it is read.
            if (h != in->Ysize) {
                if (!(t[4] = tf_memory_like(in, rows, to - from))) goto done;
                t[4]->Xres = in->Yres;
                t[4]->Yres = in->Xres;
                if (tfk_lanczos3_window_transposed(start, stride, band, in->Ysize, 0, t[4]->data, VIPS_IMAGE_SIZEOF_LINE(t[4]), h, top,
                                                   rows, 1.0 / vscale, bands)) {
                    vips_error("thumbframe", "out of memory");
                    goto done;
                }
            } else {
                if (!(t[6] = tf_memory_like(in, to - from, rows))) goto done;
                for (int y = 0; y < rows; y++)
                    memcpy(VIPS_IMAGE_ADDR(t[6], 0, y), start + (size_t) (top + y) * stride, band);
                if (tf_transpose(t[6], &t[4])) goto done;
                VIPS_UNREF(t[6]);
            }
            const size_t line = VIPS_IMAGE_SIZEOF_LINE(t[4]);
            if (!(t[5] = tf_memory_like(t[4], t[4]->Xsize, cols))) goto done;
            if (tfk_lanczos3_window(t[4]->data, line, line, in->Xsize, from, t[5]->data, line, w, left, cols, 1.0 / hscale)) {
                vips_error("thumbframe", "out of memory");
                goto done;
            }
            VIPS_UNREF(t[4]);
            if (tf_transpose(t[5], &t[1])) goto done;
            VIPS_UNREF(t[5]);
            current = t[1];
        } else {
            if (!(t[6] = tf_memory_like(in, to - from, rows))) goto done;
            if (h == in->Ysize) {
                for (int y = 0; y < rows; y++)
                    memcpy(VIPS_IMAGE_ADDR(t[6], 0, y), start + (size_t) (top + y) * stride, band);
            } else if (tfk_lanczos3_window(start, stride, band, in->Ysize, 0, t[6]->data, band, h, top, rows, 1.0 / vscale)) {
                vips_error("thumbframe", "out of memory");
                goto done;
            }
            current = t[6];
        }
    } else {
        // Alpha is premultiplied for the resize, so transparent pixels lend no colour to their
        // neighbours (as vips_thumbnail does).
        if (alpha) {
            if (vips_premultiply(current, &t[0], NULL)) goto done;
            current = t[0];
        }
        if (vips_resize(current, &t[1], hscale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3, "gap", gap, NULL)) goto done;
        current = t[1];
        if (alpha) {
            if (vips_unpremultiply(current, &t[2], NULL) || vips_cast(t[2], &t[3], format, NULL)) goto done;
            current = t[3];
        }
    }
    // Cover: the centre. Fit: vips_resize rounds each side; absorb a pixel of rounding by
    // cropping, or by repeating the edge where it came out short.
    result = tf_exact_size(current, out, width, height);
done:
    tf_unref_all(t, 8);
    return result;
}

int tf_resize_exact(VipsImage *in, VipsImage **out, int width, int height, int crop) {
    // Lanczos3 alone ("gap" 0: no box pre-shrink, which aliases): the inputs here are already
    // near their thumbnails' size, so the wider kernel costs little (zone plate: +4 dB against
    // libvips' default gap of 2 on a 5x reduction).
    return tf_resize_gap(in, out, width, height, crop, 0.0);
}

int tf_resize_linear(VipsImage *in, VipsImage **out, int width, int height) {
    if (in->Xsize == width && in->Ysize == height) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    return vips_resize(in, out, (double) width / in->Xsize, "vscale", (double) height / in->Ysize, "kernel", VIPS_KERNEL_LINEAR, "gap", 0.0,
                       NULL);
}

int tf_resize_coarse(VipsImage *in, VipsImage **out, int width, int height) {
    // Already that size (a small image's placeholder): itself, no operation.
    if (in->Xsize == width && in->Ysize == height) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    // Where the exact Lanczos3 applies (a placeholder from a thumbnail in memory) it costs about
    // what libvips' box shrink does; else libvips' default box pre-shrink (gap 2) before
    // Lanczos3: a placeholder is a blur of a few DCT terms, and the box reads a large image once.
    const gboolean exact = tf_exact_applies(in, (double) width / in->Xsize, (double) height / in->Ysize);
    return tf_resize_gap(in, out, width, height, 0, exact ? 0.0 : 2.0);
}

int tf_placeholder_rgba(VipsImage *in, VipsImage **out) {
    VipsImage *t[3] = {NULL};
    int result = -1;
    if (vips_colourspace(in, &t[0], VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    VipsImage *current = t[0];
    if (!vips_image_hasalpha(current)) {
        if (vips_bandjoin_const1(current, &t[1], 255.0, NULL)) goto done;
        current = t[1];
    }
    if (vips_cast(current, &t[2], VIPS_FORMAT_UCHAR, NULL)) goto done;
    *out = t[2];
    t[2] = NULL;
    result = 0;
done:
    tf_unref_all(t, 3);
    return result;
}

void *tf_placeholder_pixels(VipsImage *in, size_t *length) {
    const int bands = in->Bands;
    const gboolean grey = in->Type == VIPS_INTERPRETATION_B_W && (bands == 1 || bands == 2);
    const gboolean rgb = in->Type == VIPS_INTERPRETATION_sRGB && (bands == 3 || bands == 4);
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Coding != VIPS_CODING_NONE || !(grey || rgb)) {
        // Anything else through libvips' colour conversion and cast.
        VipsImage *rgba = NULL;
        if (tf_placeholder_rgba(in, &rgba)) return NULL;
        void *pixels = tf_write_to_memory(rgba, length);
        g_object_unref(rgba);
        return pixels;
    }
    size_t count = 0;
    unsigned char *source = tf_in_memory(in) ? NULL : tf_write_to_memory(in, &count);
    const unsigned char *p = source ? source : (const unsigned char *) in->data;
    if (!p) return NULL;
    const size_t pixels = (size_t) in->Xsize * in->Ysize;
    unsigned char *rgba = g_try_malloc(pixels * 4);
    if (rgba) {
        // What vips_colourspace to sRGB, an opaque alpha band and the cast to 8 bits give for
        // 8-bit grey and sRGB (the test compares them), without four operations' objects.
        for (size_t i = 0; i < pixels; i++, p += bands) {
            unsigned char *q = rgba + 4 * i;
            q[0] = p[0];
            q[1] = grey ? p[0] : p[1];
            q[2] = grey ? p[0] : p[2];
            q[3] = bands == 2 ? p[1] : bands == 4 ? p[3] : 255;
        }
        *length = pixels * 4;
    } else {
        vips_error("thumbframe", "out of memory");
    }
    g_free(source);
    return rgba;
}

int tf_autorot(VipsImage *in, VipsImage **out, int orientation) {
    VipsImage *tagged;
    if (vips_copy(in, &tagged, NULL)) return -1;
    vips_image_set_int(tagged, VIPS_META_ORIENTATION, orientation);
    int result = vips_autorot(tagged, out, NULL);
    g_object_unref(tagged);
    return result;
}

void tf_trim_heap(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

unsigned int tf_ref_count(VipsImage *image) { return g_atomic_int_get((gint *) &G_OBJECT(image)->ref_count); }

int tf_is_cmyk(VipsImage *image) { return image->Type == VIPS_INTERPRETATION_CMYK && image->Bands >= 4; }

int tf_flatten_white(VipsImage *in, VipsImage **out) {
    double white[] = {255.0, 255.0, 255.0};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

int tf_save_buffer(VipsImage *in, TFFormat format, int quality, int interlace, void **buffer, size_t *length) {
    /* "strip" keeps every piece of metadata out of JPEG and AVIF. libvips 8.14's webpsave writes
     * an EXIF block whatever it is told; ItemProcessor removes WebP's metadata chunks from the
     * file (MetadataBounds.webpWithoutMetadata). */
    switch (format) {
    case TF_FORMAT_JPEG: return tf_jpegsave_here(in, quality, interlace, buffer, length);
    case TF_FORMAT_WEBP: return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, NULL);
    case TF_FORMAT_AVIF:
        return vips_heifsave_buffer(in, buffer, length, "Q", quality, "strip", TRUE, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                    NULL);
    case TF_FORMAT_PNG: break; /* not a thumbnail format; fixtures write PNG with tf_save_file */
    }
    vips_error("thumbframe", "unknown output format %d", (int) format);
    return -1;
}

ExifData *tf_exif_load(const unsigned char *data, unsigned int length) {
    ExifData *exif = exif_data_new();
    if (!exif) return NULL;
    exif_data_unset_option(exif, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_load_data(exif, data, length);
    return exif;
}

ExifEntry *tf_exif_entry(ExifData *exif, ExifIfd ifd, ExifTag tag) {
    if (!exif || ifd < 0 || ifd >= EXIF_IFD_COUNT || !exif->ifd[ifd]) return NULL;
    return exif_content_get_entry(exif->ifd[ifd], tag);
}

int tf_exif_short(ExifData *exif, ExifEntry *entry) {
    if (!exif || !entry || entry->format != EXIF_FORMAT_SHORT || entry->components < 1 || entry->size < 2) return -1;
    return exif_get_short(entry->data, exif_data_get_byte_order(exif));
}

int tf_guard_stops(TFGuard *guard) {
    if (guard->reason == TF_STOP_NONE) {
        if (guard->stop && tf_flag_get(guard->stop))
            guard->reason = TF_STOP_REQUESTED;
        else if (guard->deadline && g_get_monotonic_time() > guard->deadline)
            guard->reason = TF_STOP_DEADLINE;
    }
    return guard->reason != TF_STOP_NONE;
}

static void tf_guard_eval(VipsImage *image, VipsProgress *progress, void *data) {
    (void) progress;
    if (tf_guard_stops(data)) vips_image_set_kill(image, TRUE);
}

/* vips_image_copy_memory computed in the calling thread: strips pulled through a region and
 * written line by line. With one libvips thread per image a sink's thread pool computes on one
 * worker while this thread waits, at the price of a hand-off per strip (the futex calls that
 * were most of a small file's system time). The guard is checked between strips. */
static VipsImage *tf_copy_memory_here(VipsImage *in, TFGuard *guard) {
    VipsImage *out = vips_image_new_memory();
    VipsRegion *region = NULL;
    int failed = vips_image_pipelinev(out, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL) || vips_image_write_prepare(out) ||
                 !(region = vips_region_new(in));
    const int strip = 16;
    for (int top = 0; !failed && top < in->Ysize; top += strip) {
        VipsRect rect = {0, top, in->Xsize, VIPS_MIN(strip, in->Ysize - top)};
        if (tf_guard_stops(guard) || vips_region_prepare(region, &rect)) {
            failed = 1;
            break;
        }
        for (int y = rect.top; !failed && y < rect.top + rect.height; y++)
            failed = vips_image_write_line(out, y, VIPS_REGION_ADDR(region, 0, y));
    }
    if (region) g_object_unref(region);
    if (failed) {
        g_object_unref(out);
        return NULL;
    }
    return out;
}

void *tf_write_to_memory(VipsImage *in, size_t *length) {
    if (vips_concurrency_get() > 1) return vips_image_write_to_memory(in, length);
    TFGuard guard = {0, NULL, TF_STOP_NONE};
    VipsImage *copy = tf_copy_memory_here(in, &guard);
    if (!copy) return NULL;
    *length = VIPS_IMAGE_SIZEOF_IMAGE(copy);
    void *pixels = g_try_malloc(*length);
    if (pixels)
        memcpy(pixels, VIPS_IMAGE_ADDR(copy, 0, 0), *length);
    else
        vips_error("thumbframe", "out of memory");
    g_object_unref(copy);
    return pixels;
}

VipsImage *tf_copy_memory_guarded(VipsImage *in, double timeout_seconds, const int *stop, int *reason) {
    *reason = TF_STOP_NONE;
    /* Already pixels in memory: itself, with no progress signal connected and cut again. */
    if (tf_in_memory(in)) {
        g_object_ref(in);
        return in;
    }
    TFGuard guard = {0, stop, TF_STOP_NONE};
    if (timeout_seconds > 0) guard.deadline = g_get_monotonic_time() + (gint64) (timeout_seconds * 1e6);
    if (vips_concurrency_get() <= 1 && !vips_image_isfile(in) && in->data == NULL) {
        VipsImage *out = tf_copy_memory_here(in, &guard);
        *reason = out ? TF_STOP_NONE : guard.reason;
        return out;
    }
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

int tf_flag_get(const int *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }

void tf_flag_set(int *flag, int value) { __atomic_store_n(flag, value, __ATOMIC_RELAXED); }

int tf_image_sizeof_band(VipsImage *image) { return (int) vips_format_sizeof(vips_image_get_format(image)); }

int tf_profile_intent(VipsImage *image) {
    if (!vips_image_get_typeof(image, VIPS_META_ICC_NAME)) return TF_PROFILE_NONE;
    const void *data = NULL;
    size_t size = 0;
    if (vips_image_get_blob(image, VIPS_META_ICC_NAME, &data, &size) || size == 0) {
        vips_error_clear();
        return TF_PROFILE_UNUSABLE;
    }
    /* lcms reports a broken profile through its log handler (libvips' error buffer): the
     * answer here is the return value alone. */
    cmsHPROFILE profile = cmsOpenProfileFromMem(data, (cmsUInt32Number) size);
    if (!profile) {
        vips_error_clear();
        return TF_PROFILE_UNUSABLE;
    }
    int channels = image->Bands - (vips_image_hasalpha(image) ? 1 : 0);
    cmsColorSpaceSignature space = cmsGetColorSpace(profile);
    int fits = (space == cmsSigRgbData && channels == 3) || (space == cmsSigGrayData && channels == 1) ||
               (space == cmsSigCmykData && channels == 4);
    int intent = TF_PROFILE_UNUSABLE;
    if (fits) {
        static const int order[] = {VIPS_INTENT_RELATIVE, VIPS_INTENT_PERCEPTUAL, VIPS_INTENT_SATURATION};
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
            if (cmsIsIntentSupported(profile, (cmsUInt32Number) order[i], LCMS_USED_AS_INPUT)) {
                intent = order[i];
                break;
            }
    }
    cmsCloseProfile(profile);
    return intent;
}

int tf_with_profile(VipsImage *in, VipsImage **out, const void *profile, size_t length) {
    if (vips_copy(in, out, NULL)) return -1;
    (void) vips_image_remove(*out, VIPS_META_ICC_NAME);
    if (length > 0) vips_image_set_blob_copy(*out, VIPS_META_ICC_NAME, profile, length);
    return 0;
}

int tf_to_srgb(VipsImage *in, VipsImage **out) { return tf_to_srgb_with(in, out, tf_profile_intent(in)); }

int tf_to_srgb_with(VipsImage *in, VipsImage **out, int intent) {
    gboolean tagged = intent >= 0;
    gboolean cmyk = tf_is_cmyk(in);
    if (!tagged && !cmyk) return vips_copy(in, out, NULL);
    gboolean grey = in->Bands - (vips_image_hasalpha(in) ? 1 : 0) == 1;
    VipsImage *t[3] = {NULL};
    int result = -1;
    /* An unusable embedded profile is not handed to libvips at all: it would warn and use its
     * default profile, which is what happens here, said in the header instead. */
    if (tagged && vips_icc_transform(in, &t[0], "srgb", "embedded", TRUE, "intent", intent, "depth", 8, NULL)) {
        /* libvips judges a profile against the image's interpretation too (a Lab TIFF with
         * an RGB profile): then as if unusable. */
        vips_error_clear();
        tagged = FALSE;
        if (!cmyk) {
            result = vips_copy(in, out, NULL);
            goto done;
        }
    }
    if (!tagged && vips_icc_transform(in, &t[0], "srgb", "input_profile", "cmyk", "intent", VIPS_INTENT_RELATIVE, "depth", 8, NULL))
        goto done;
    VipsImage *current = t[0];
    if (grey) {
        if (vips_colourspace(current, &t[1], VIPS_INTERPRETATION_B_W, NULL)) goto done;
        current = t[1];
    }
    /* The pixels are sRGB now and carry no profile: converting again changes nothing. */
    if (vips_copy(current, &t[2], NULL)) goto done;
    vips_image_remove(t[2], VIPS_META_ICC_NAME);
    *out = t[2];
    t[2] = NULL;
    result = 0;
done:
    tf_unref_all(t, 3);
    return result;
}

/* An image of a copy of `width` x `height` 8-bit pixels of `bands` bands, as `interpretation`. */
static int tf_image_from_copy(const void *pixels, size_t length, int width, int height, int bands, VipsInterpretation interpretation,
                              VipsImage **out) {
    VipsImage *raw = vips_image_new_from_memory_copy(pixels, length, width, height, bands, VIPS_FORMAT_UCHAR);
    if (!raw) return -1;
    int result = vips_copy(raw, out, "interpretation", interpretation, NULL);
    g_object_unref(raw);
    return result;
}

int tf_image_from_rgb(const void *pixels, size_t length, int width, int height, VipsImage **out) {
    return tf_image_from_copy(pixels, length, width, height, 3, VIPS_INTERPRETATION_sRGB, out);
}

int tf_image_from_grey(const void *pixels, size_t length, int width, int height, VipsImage **out) {
    return tf_image_from_copy(pixels, length, width, height, 1, VIPS_INTERPRETATION_B_W, out);
}

static double tf_monotonic_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) now.tv_sec + (double) now.tv_nsec / 1e9;
}

TFDecodeGuard tf_guard_start(double timeout_seconds, const int *stop) {
    TFDecodeGuard guard = {timeout_seconds > 0 ? tf_monotonic_now() + timeout_seconds : 0, stop, TF_STOP_NONE};
    return guard;
}

int tf_guard_check(TFDecodeGuard *guard) {
    if (guard->stop && tf_flag_get(guard->stop)) {
        guard->stopped = TF_STOP_REQUESTED;
        return 1;
    }
    if (guard->deadline > 0 && tf_monotonic_now() > guard->deadline) {
        guard->stopped = TF_STOP_DEADLINE;
        return 1;
    }
    return 0;
}
