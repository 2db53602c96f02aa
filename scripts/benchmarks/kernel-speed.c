// Measures CThumbframeKernels' horizontal Lanczos3 (transpose, Lanczos3 down the columns,
// transpose back) against libvips' reduceh on the same 8-bit pixels in memory, one thread each:
// the claim in CThumbframeShim's tf_resize_exact. Built and run by scripts/benchmarks/kernel-speed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vips/vips.h>

#include "tf_kernels.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) vips_error_exit(NULL);
    vips_concurrency_set(1);
    vips_cache_set_max(0);
    // What the horizontal pass of a 1280 px preview sees for a 6000 x 4000 JPEG: decoded at 1/2
    // (3000 x 2000), reduced vertically to 853 rows, then 3000 -> 1280 columns.
    int width = argc > 1 ? atoi(argv[1]) : 3000, height = argc > 2 ? atoi(argv[2]) : 853;
    int target = argc > 3 ? atoi(argv[3]) : 1280, runs = argc > 4 ? atoi(argv[4]) : 15, bands = 3;
    const double shrink = (double) width / target;
    size_t size = (size_t) width * height * bands;
    uint8_t *pixels = malloc(size);
    unsigned state = 1;
    for (size_t i = 0; i < size; i++) {
        // A smooth picture with noise, like a photo's decode.
        state = state * 1103515245u + 12345u;
        size_t pixel = i / bands;
        pixels[i] = (uint8_t) (((pixel % width) * 255 / width + (pixel / width) * 255 / height) / 2 + (state >> 28));
    }
    VipsImage *in = vips_image_new_from_memory(pixels, size, width, height, bands, VIPS_FORMAT_UCHAR);
    double vips_ms[runs], ours_ms[runs];
    uint8_t *transposed = malloc(size), *reduced = malloc((size_t) target * height * bands);
    uint8_t *ours = malloc((size_t) target * height * bands);
    VipsImage *theirs = NULL;
    for (int run = 0; run < runs; run++) {
        double start = now_ms();
        VipsImage *lazy = NULL;
        if (vips_reduceh(in, &lazy, shrink, "kernel", VIPS_KERNEL_LANCZOS3, NULL)) vips_error_exit(NULL);
        VipsImage *done = vips_image_copy_memory(lazy);
        g_object_unref(lazy);
        if (!done) vips_error_exit(NULL);
        vips_ms[run] = now_ms() - start;
        if (theirs) g_object_unref(theirs);
        theirs = done;

        start = now_ms();
        tfk_transpose(pixels, transposed, width, height, bands);
        if (tfk_lanczos3_rows(transposed, (size_t) height * bands, width, reduced, target, shrink)) return 1;
        tfk_transpose(reduced, ours, height, target, bands);
        ours_ms[run] = now_ms() - start;
    }
    // The two agree to a rounding step where both place the same columns.
    int most = 0, compared_width = VIPS_MIN(target, theirs->Xsize);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < compared_width * bands; x++) {
            int d = abs((int) ours[(size_t) y * target * bands + x] - (int) VIPS_IMAGE_ADDR(theirs, 0, y)[x]);
            if (d > most) most = d;
        }
    qsort(vips_ms, runs, sizeof(double), compare);
    qsort(ours_ms, runs, sizeof(double), compare);
    printf("%d x %d x %d -> %d columns (Lanczos3, one thread, median of %d)\n", width, height, bands, target, runs);
    printf("libvips %s reduceh:  %7.2f ms\n", vips_version_string(), vips_ms[runs / 2]);
    printf("thumbframe kernels: %7.2f ms (transpose, Lanczos3 rows, transpose)\n", ours_ms[runs / 2]);
    printf("ratio reduceh / kernels: %.2f; largest difference %d of 255 over %d columns\n", vips_ms[runs / 2] / ours_ms[runs / 2], most,
           compared_width);
    return 0;
}
