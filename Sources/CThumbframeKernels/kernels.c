#include "tf_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline int tfk_min(int a, int b) { return a < b ? a : b; }
static inline int tfk_clip(int low, int value, int high) { return value < low ? low : value > high ? high : value; }

/* Inlined with a constant `bands`, so a pixel is one small copy. */
static inline __attribute__((always_inline)) void tfk_transpose_pixels(
    const uint8_t *in, uint8_t *out, int width, int height, const int bands
) {
    const size_t in_line = (size_t) width * bands;
    const size_t out_line = (size_t) height * bands;
    for (int x0 = 0; x0 < width; x0 += 32) {
        const int x1 = tfk_min(x0 + 32, width);
        for (int y0 = 0; y0 < height; y0 += 32) {
            const int y1 = tfk_min(y0 + 32, height);
            for (int x = x0; x < x1; x++) {
                const uint8_t *p = in + (size_t) y0 * in_line + (size_t) x * bands;
                uint8_t *q = out + (size_t) x * out_line + (size_t) y0 * bands;
                for (int y = y0; y < y1; y++, p += in_line, q += bands)
                    memcpy(q, p, bands);
            }
        }
    }
}

void tfk_transpose(const uint8_t *in, uint8_t *out, int width, int height, int bands) {
    switch (bands) {
    case 1: tfk_transpose_pixels(in, out, width, height, 1); break;
    case 2: tfk_transpose_pixels(in, out, width, height, 2); break;
    case 3: tfk_transpose_pixels(in, out, width, height, 3); break;
    default: tfk_transpose_pixels(in, out, width, height, bands); break;
    }
}

static double tfk_lanczos3(double x) {
    if (x == 0.0)
        return 1.0;
    if (x <= -3.0 || x >= 3.0)
        return 0.0;
    const double px = M_PI * x;
    return 3.0 * sin(px) * sin(px / 3.0) / (px * px);
}

/* acc[i] += w0 * r0[i] + w1 * r1[i] for i < n. */
static inline void tfk_madd_rows(int32_t *acc, const uint8_t *r0, const uint8_t *r1, int16_t w0, int16_t w1, size_t n) {
    size_t i = 0;
#if defined(__SSE2__)
    // Bytes of the two rows interleaved and widened to 16-bit pairs (a, b); pmaddwd multiplies
    // each pair by (w0, w1) and adds: four 32-bit sums per instruction.
    const __m128i weights = _mm_set1_epi32((int32_t) ((uint32_t) (uint16_t) w0 | ((uint32_t) (uint16_t) w1 << 16)));
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *) (r0 + i));
        const __m128i b = _mm_loadu_si128((const __m128i *) (r1 + i));
        const __m128i low = _mm_unpacklo_epi8(a, b);
        const __m128i high = _mm_unpackhi_epi8(a, b);
        const __m128i pairs[4] = {
            _mm_unpacklo_epi8(low, zero), _mm_unpackhi_epi8(low, zero),
            _mm_unpacklo_epi8(high, zero), _mm_unpackhi_epi8(high, zero),
        };
        for (int k = 0; k < 4; k++) {
            __m128i *sum = (__m128i *) (acc + i) + k;
            _mm_storeu_si128(sum, _mm_add_epi32(_mm_loadu_si128(sum), _mm_madd_epi16(pairs[k], weights)));
        }
    }
#endif
    for (; i < n; i++)
        acc[i] += w0 * r0[i] + w1 * r1[i];
}

int tfk_lanczos3_rows(const uint8_t *in, size_t line, int rows_in, uint8_t *out, int rows_out, double scale) {
    const double support = 3.0 * scale;
    const int most = 2 * (int) ceil(support) + 2;
    double *exact = malloc(sizeof(double) * most);
    int16_t *weights = malloc(sizeof(int16_t) * most);
    int32_t *acc = malloc(sizeof(int32_t) * (line ? line : 1));
    int result = -1;
    if (!exact || !weights || !acc)
        goto done;
    for (int i = 0; i < rows_out; i++) {
        const double centre = (i + 0.5) * scale - 0.5 - (rows_out * scale - rows_in) / 2.0;
        const int first = (int) floor(centre - support) + 1;
        int taps = (int) floor(centre + support) - first + 1;
        double sum = 0.0;
        for (int k = 0; k < taps; k++)
            sum += exact[k] = tfk_lanczos3((first + k - centre) / scale);
        int total = 0, largest = 0;
        for (int k = 0; k < taps; k++) {
            weights[k] = (int16_t) lrint(exact[k] / sum * 16384.0);
            total += weights[k];
            if (abs(weights[k]) > abs(weights[largest]))
                largest = k;
        }
        weights[largest] += 16384 - total;  // the weights sum to exactly 1
        if (taps & 1)
            weights[taps++] = 0;
        for (size_t x = 0; x < line; x++)
            acc[x] = 8192;  // rounds the final shift
        for (int k = 0; k < taps; k += 2) {
            const int r0 = tfk_clip(0, first + k, rows_in - 1);
            const int r1 = tfk_clip(0, first + k + 1, rows_in - 1);
            tfk_madd_rows(acc, in + (size_t) r0 * line, in + (size_t) r1 * line, weights[k], weights[k + 1], line);
        }
        uint8_t *q = out + (size_t) i * line;
        for (size_t x = 0; x < line; x++)
            q[x] = (uint8_t) tfk_clip(0, acc[x] >> 14, 255);
    }
    result = 0;
done:
    free(exact);
    free(weights);
    free(acc);
    return result;
}
