#include "tf_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline int tfk_min(int a, int b) { return a < b ? a : b; }
static inline int tfk_clip(int low, int value, int high) { return value < low ? low : value > high ? high : value; }

/* Inlined with a constant `bands`, so a pixel is one small copy. Rows of `in_line` bytes in,
 * `out_line` out. */
static inline __attribute__((always_inline)) void tfk_transpose_pixels(const uint8_t *in, size_t in_line, uint8_t *out, size_t out_line,
                                                                       int width, int height, const int bands) {
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

/* Three bands (RGB, every resize's case): a pixel moved as one 4-byte load and store, its fourth
 * byte the next pixel's, which is written next (the last of each run of an output row takes
 * its 3 bytes alone, and a load's fourth byte lies in the image: the next column, or the next
 * row's first). Blocks of 8 input rows by 128 columns keep both sides in the L1 cache: twice as
 * fast as the pixel-by-pixel copy on the bench's resizes, where transposes were 9 % of a cold
 * build's CPU. */
static void tfk_transpose_rgb(const uint8_t *in, size_t in_line, uint8_t *out, size_t out_line, int width, int height) {
    for (int y0 = 0; y0 < height; y0 += 8) {
        const int y1 = tfk_min(y0 + 8, height);
        for (int x0 = 0; x0 < width; x0 += 128) {
            const int x1 = tfk_min(x0 + 128, width);
            for (int x = x0; x < x1; x++) {
                const uint8_t *p = in + (size_t) y0 * in_line + (size_t) x * 3;
                uint8_t *q = out + (size_t) x * out_line + (size_t) y0 * 3;
                int y = y0;
                for (; y + 1 < y1; y++, p += in_line, q += 3) {
                    uint32_t pixel;
                    memcpy(&pixel, p, 4);
                    memcpy(q, &pixel, 4);
                }
                memcpy(q, p, 3);
            }
        }
    }
}

/* tfk_transpose with rows of `in_line` bytes in and `out_line` out. */
static void tfk_transpose_strided(const uint8_t *in, size_t in_line, uint8_t *out, size_t out_line, int width, int height, int bands) {
    switch (bands) {
    case 1: tfk_transpose_pixels(in, in_line, out, out_line, width, height, 1); break;
    case 2: tfk_transpose_pixels(in, in_line, out, out_line, width, height, 2); break;
    case 3: tfk_transpose_rgb(in, in_line, out, out_line, width, height); break;
    default: tfk_transpose_pixels(in, in_line, out, out_line, width, height, bands); break;
    }
}

void tfk_transpose(const uint8_t *in, uint8_t *out, int width, int height, int bands) {
    tfk_transpose_strided(in, (size_t) width * bands, out, (size_t) height * bands, width, height, bands);
}

static double tfk_lanczos3(double x) {
    if (x == 0.0) return 1.0;
    if (x <= -3.0 || x >= 3.0) return 0.0;
    const double px = M_PI * x;
    return 3.0 * sin(px) * sin(px / 3.0) / (px * px);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TFK_AVX2 1
/* The SSE2 loop below on 32 bytes at a time. Every AVX2 instruction used works within each
 * 128-bit lane, so each lane computes exactly what SSE2 computes for its 16 bytes. */
__attribute__((target("avx2"))) static size_t tfk_lanczos3_row_avx2(uint8_t *q, const uint8_t *const *rows, const int16_t *w, int taps,
                                                                    size_t n) {
    size_t x = 0;
    const __m256i zero = _mm256_setzero_si256();
    const __m256i half = _mm256_set1_epi32(8192);
    for (; x + 32 <= n; x += 32) {
        __m256i sum0 = half, sum1 = half, sum2 = half, sum3 = half;
        for (int k = 0; k < taps; k += 2) {
            const __m256i weights = _mm256_set1_epi32((int32_t) ((uint32_t) (uint16_t) w[k] | ((uint32_t) (uint16_t) w[k + 1] << 16)));
            const __m256i a = _mm256_loadu_si256((const __m256i *) (rows[k] + x));
            const __m256i b = _mm256_loadu_si256((const __m256i *) (rows[k + 1] + x));
            const __m256i low = _mm256_unpacklo_epi8(a, b);
            const __m256i high = _mm256_unpackhi_epi8(a, b);
            sum0 = _mm256_add_epi32(sum0, _mm256_madd_epi16(_mm256_unpacklo_epi8(low, zero), weights));
            sum1 = _mm256_add_epi32(sum1, _mm256_madd_epi16(_mm256_unpackhi_epi8(low, zero), weights));
            sum2 = _mm256_add_epi32(sum2, _mm256_madd_epi16(_mm256_unpacklo_epi8(high, zero), weights));
            sum3 = _mm256_add_epi32(sum3, _mm256_madd_epi16(_mm256_unpackhi_epi8(high, zero), weights));
        }
        const __m256i words0 = _mm256_packs_epi32(_mm256_srai_epi32(sum0, 14), _mm256_srai_epi32(sum1, 14));
        const __m256i words1 = _mm256_packs_epi32(_mm256_srai_epi32(sum2, 14), _mm256_srai_epi32(sum3, 14));
        _mm256_storeu_si256((__m256i *) (q + x), _mm256_packus_epi16(words0, words1));
    }
    return x;
}
#endif

/* One output row: q[x] = clip((8192 + sum_k w[k] * rows[k][x]) >> 14) for x < n, over `taps`
 * (even) rows. 32 bytes at a time (AVX2, where the processor has it) or 16 (SSE2) with every tap
 * summed in registers: the sums never go through memory, and the result is exactly the scalar one. */
static void tfk_lanczos3_row(uint8_t *q, const uint8_t *const *rows, const int16_t *w, int taps, size_t n, int avx2) {
    size_t x = 0;
#if defined(TFK_AVX2)
    if (avx2) x = tfk_lanczos3_row_avx2(q, rows, w, taps, n);
#else
    (void) avx2;
#endif
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const __m128i half = _mm_set1_epi32(8192);
    for (; x + 16 <= n; x += 16) {
        __m128i sum0 = half, sum1 = half, sum2 = half, sum3 = half;
        for (int k = 0; k < taps; k += 2) {
            // Bytes of two rows interleaved and widened to 16-bit pairs (a, b); pmaddwd
            // multiplies each pair by (w0, w1) and adds: four 32-bit sums per instruction.
            const __m128i weights = _mm_set1_epi32((int32_t) ((uint32_t) (uint16_t) w[k] | ((uint32_t) (uint16_t) w[k + 1] << 16)));
            const __m128i a = _mm_loadu_si128((const __m128i *) (rows[k] + x));
            const __m128i b = _mm_loadu_si128((const __m128i *) (rows[k + 1] + x));
            const __m128i low = _mm_unpacklo_epi8(a, b);
            const __m128i high = _mm_unpackhi_epi8(a, b);
            sum0 = _mm_add_epi32(sum0, _mm_madd_epi16(_mm_unpacklo_epi8(low, zero), weights));
            sum1 = _mm_add_epi32(sum1, _mm_madd_epi16(_mm_unpackhi_epi8(low, zero), weights));
            sum2 = _mm_add_epi32(sum2, _mm_madd_epi16(_mm_unpacklo_epi8(high, zero), weights));
            sum3 = _mm_add_epi32(sum3, _mm_madd_epi16(_mm_unpackhi_epi8(high, zero), weights));
        }
        // Arithmetic shift, then saturate to 16 and to 8 bits: the scalar clip to 0…255.
        const __m128i words0 = _mm_packs_epi32(_mm_srai_epi32(sum0, 14), _mm_srai_epi32(sum1, 14));
        const __m128i words1 = _mm_packs_epi32(_mm_srai_epi32(sum2, 14), _mm_srai_epi32(sum3, 14));
        _mm_storeu_si128((__m128i *) (q + x), _mm_packus_epi16(words0, words1));
    }
#endif
    for (; x < n; x++) {
        int32_t sum = 8192;
        for (int k = 0; k < taps; k++)
            sum += w[k] * rows[k][x];
        q[x] = (uint8_t) tfk_clip(0, sum >> 14, 255);
    }
}

/* The first input row and the number of taps of output row i (of rows_out, reducing rows_in by
 * `scale`, centred as libvips centres), before clipping to the image. */
static inline int tfk_lanczos3_taps(int i, int rows_in, int rows_out, double scale, double *centre) {
    const double support = 3.0 * scale;
    *centre = (i + 0.5) * scale - 0.5 - (rows_out * scale - rows_in) / 2.0;
    return (int) floor(*centre - support) + 1;
}

void tfk_lanczos3_span(int rows_in, int rows_out, double scale, int first, int count, int *from, int *to) {
    double centre;
    const int low = tfk_lanczos3_taps(first, rows_in, rows_out, scale, &centre);
    tfk_lanczos3_taps(first + count - 1, rows_in, rows_out, scale, &centre);
    const int high = (int) floor(centre + 3.0 * scale);
    *from = tfk_clip(0, low, rows_in - 1);
    *to = tfk_clip(0, high, rows_in - 1) + 1;
}

/* tfk_lanczos3_window and tfk_lanczos3_window_transposed: with `bands` > 0, each run of 8
 * output rows is computed into `strip` and transposed into `out` from there. */
static int tfk_lanczos3_pass(const uint8_t *in, size_t stride, size_t line, int rows_in, int in_first, uint8_t *out, size_t out_stride,
                             int rows_out, int out_first, int out_count, double scale, int bands) {
    const double support = 3.0 * scale;
    const int most = 2 * (int) ceil(support) + 2;
    double *exact = malloc(sizeof(double) * most);
    int16_t *weights = malloc(sizeof(int16_t) * most);
    const uint8_t **rows = malloc(sizeof(uint8_t *) * most);
    uint8_t *strip = bands > 0 ? malloc(line * 8) : NULL;
#if defined(TFK_AVX2)
    const int avx2 = __builtin_cpu_supports("avx2");
#else
    const int avx2 = 0;
#endif
    int result = -1;
    if (!exact || !weights || !rows || (bands > 0 && !strip)) goto done;
    for (int i = out_first; i < out_first + out_count; i++) {
        double centre;
        const int first = tfk_lanczos3_taps(i, rows_in, rows_out, scale, &centre);
        int taps = (int) floor(centre + support) - first + 1;
        double sum = 0.0;
        for (int k = 0; k < taps; k++)
            sum += exact[k] = tfk_lanczos3((first + k - centre) / scale);
        int total = 0, largest = 0;
        for (int k = 0; k < taps; k++) {
            weights[k] = (int16_t) lrint(exact[k] / sum * 16384.0);
            total += weights[k];
            if (abs(weights[k]) > abs(weights[largest])) largest = k;
        }
        weights[largest] += 16384 - total; // the weights sum to exactly 1
        for (int k = 0; k < taps; k++)
            rows[k] = in + (size_t) (tfk_clip(0, first + k, rows_in - 1) - in_first) * stride;
        if (taps & 1) {
            weights[taps] = 0;
            rows[taps] = rows[taps - 1];
            taps++;
        }
        const int row = i - out_first;
        if (bands == 0) {
            tfk_lanczos3_row(out + (size_t) row * out_stride, rows, weights, taps, line, avx2);
            continue;
        }
        tfk_lanczos3_row(strip + (size_t) (row % 8) * line, rows, weights, taps, line, avx2);
        if (row % 8 == 7 || row == out_count - 1) {
            const int held = row % 8 + 1;
            tfk_transpose_strided(strip, line, out + (size_t) (row - held + 1) * bands, out_stride, (int) (line / (size_t) bands), held,
                                  bands);
        }
    }
    result = 0;
done:
    free(exact);
    free(weights);
    free(rows);
    free(strip);
    return result;
}

int tfk_lanczos3_window(const uint8_t *in, size_t stride, size_t line, int rows_in, int in_first, uint8_t *out, size_t out_stride,
                        int rows_out, int out_first, int out_count, double scale) {
    return tfk_lanczos3_pass(in, stride, line, rows_in, in_first, out, out_stride, rows_out, out_first, out_count, scale, 0);
}

int tfk_lanczos3_window_transposed(const uint8_t *in, size_t stride, size_t line, int rows_in, int in_first, uint8_t *out,
                                   size_t out_stride, int rows_out, int out_first, int out_count, double scale, int bands) {
    if (bands < 1 || line % (size_t) bands) return -1;
    return tfk_lanczos3_pass(in, stride, line, rows_in, in_first, out, out_stride, rows_out, out_first, out_count, scale, bands);
}

int tfk_lanczos3_rows(const uint8_t *in, size_t line, int rows_in, uint8_t *out, int rows_out, double scale) {
    return tfk_lanczos3_window(in, line, line, rows_in, 0, out, line, rows_out, 0, rows_out, scale);
}

/* HDR to SDR for video posters (tfk_tonemap_rgb48). */

static double tfk_pq_eotf(double signal) { // ST 2084: signal 0…1 to cd/m²
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
    double p = pow(signal > 0 ? signal : 0, 1 / m2);
    double numerator = p - c1 > 0 ? p - c1 : 0;
    return 10000 * pow(numerator / (c2 - c3 * p), 1 / m1);
}

static double tfk_hlg_inverse_oetf(double signal) { // BT.2100: signal 0…1 to scene light 0…1
    const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a);
    if (signal <= 0.5) return signal * signal / 3;
    return (exp((signal - c) / a) + b) / 12;
}

static double tfk_srgb(double linear) {
    if (linear <= 0.0031308) return 12.92 * (linear > 0 ? linear : 0);
    return 1.055 * pow(linear, 1 / 2.4) - 0.055;
}

// The output curve and HLG's OOTF gain through tables over 65536 steps of [0, 1] (the second
// pass of tfk_tonemap's rendition form); filled once, as the signal tables are.
static uint8_t tfk_srgb_table[65536];
static double tfk_gain_table[65536];
static int tfk_tables_ready;

static void tfk_fill_output_tables(void) {
    if (__atomic_load_n(&tfk_tables_ready, __ATOMIC_ACQUIRE)) return;
    for (int code = 0; code < 65536; code++) {
        double value = tfk_srgb(code / 65535.0) * 255 + 0.5;
        tfk_srgb_table[code] = (uint8_t) (value < 0 ? 0 : value > 255 ? 255 : value);
        tfk_gain_table[code] = 1000 * pow(code / 65535.0, 0.2);
    }
    __atomic_store_n(&tfk_tables_ready, 1, __ATOMIC_RELEASE);
}

static inline int tfk_step(double value) { return value <= 0 ? 0 : value >= 1 ? 65535 : (int) (value * 65535 + 0.5); }

static void tfk_tonemap(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, TFKPrimaries primaries,
                        uint8_t *out, int tabled, uint16_t *gain);

TFKPrimaries tfk_primaries(int code) {
    switch (code) {
    case 1: return TFK_PRIMARIES_BT709;
    case 11:
    case 12: return TFK_PRIMARIES_P3;
    default: return TFK_PRIMARIES_BT2020;
    }
}

void tfk_tonemap_rgb48(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, uint8_t *out) {
    tfk_tonemap(in, stride, width, height, transfer, TFK_PRIMARIES_BT2020, out, 0, NULL);
}

void tfk_tonemap_rgb48_gain(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, uint8_t *out, uint16_t *gain) {
    tfk_tonemap(in, stride, width, height, transfer, TFK_PRIMARIES_BT2020, out, 0, gain);
}

void tfk_tonemap_rgb48_gain_from(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, TFKPrimaries primaries,
                                 uint8_t *out, uint16_t *gain) {
    tfk_tonemap(in, stride, width, height, transfer, primaries, out, 0, gain);
}

void tfk_tonemap_rgb48_frames(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, uint8_t *out) {
    tfk_fill_output_tables();
    tfk_tonemap(in, stride, width, height, transfer, TFK_PRIMARIES_BT2020, out, 1, NULL);
}

static void tfk_tonemap(const uint16_t *in, size_t stride, int width, int height, TFKTransfer transfer, TFKPrimaries primaries,
                        uint8_t *out, int tabled, uint16_t *gain) {
    const double white = 203; // cd/m², HDR reference white (BT.2408)
    const double knee = 0.75;
    // The signal's primaries to BT.709's, linear light: BT.2020 (BT.2087), Display P3 (from both
    // sets' xy and D65, as ICC's and Apple's matrices are), BT.709 itself.
    static const double to709[3][3][3] = {
        {{1.6605, -0.5876, -0.0728}, {-0.1246, 1.1329, -0.0083}, {-0.0182, -0.1006, 1.1187}},
        {{1.2249401, -0.2249404, 0.0}, {-0.0420569, 1.0420571, 0.0}, {-0.0196376, -0.0786361, 1.0982735}},
        {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
    };
    const double(*m)[3] = to709[primaries];
    // HLG's OOTF weighs the scene luminance by the signal's own primaries' luminance coefficients.
    static const double luma[3][3] = {{0.2627, 0.6780, 0.0593}, {0.2289746, 0.6917385, 0.0792869}, {0.2126, 0.7152, 0.0722}};
    const double *weights = luma[primaries];
    // The curves through a table over 16-bit code values: one pow per code value, not per pixel.
    static double pq_table[65536], hlg_table[65536];
    static int pq_ready, hlg_ready;
    double *table = transfer == TFK_TRANSFER_PQ ? pq_table : hlg_table;
    int *ready = transfer == TFK_TRANSFER_PQ ? &pq_ready : &hlg_ready;
    if (!__atomic_load_n(ready, __ATOMIC_ACQUIRE)) {
        // Two threads may fill it at once: they write the same values.
        for (int code = 0; code < 65536; code++) {
            double signal = code / 65535.0;
            table[code] = transfer == TFK_TRANSFER_PQ ? tfk_pq_eotf(signal) : tfk_hlg_inverse_oetf(signal);
        }
        __atomic_store_n(ready, 1, __ATOMIC_RELEASE);
    }
    for (int y = 0; y < height; y++) {
        const uint16_t *row = (const uint16_t *) ((const uint8_t *) in + (size_t) y * stride);
        uint8_t *target = out + (size_t) y * width * 3;
        for (int x = 0; x < width; x++) {
            double rgb[3] = {table[row[3 * x]], table[row[3 * x + 1]], table[row[3 * x + 2]]};
            if (transfer == TFK_TRANSFER_HLG) {
                // OOTF for a 1000 cd/m² display: system gamma 1.2 on the scene luminance.
                double luminance = weights[0] * rgb[0] + weights[1] * rgb[1] + weights[2] * rgb[2];
                double gain = tabled ? tfk_gain_table[tfk_step(luminance)] : 1000 * (luminance > 0 ? pow(luminance, 0.2) : 0);
                for (int i = 0; i < 3; i++)
                    rgb[i] *= gain;
            }
            double linear[3];
            for (int i = 0; i < 3; i++) {
                double value = (m[i][0] * rgb[0] + m[i][1] * rgb[1] + m[i][2] * rgb[2]) / white;
                linear[i] = value > 0 ? value : 0;
            }
            double peak = linear[0] > linear[1] ? linear[0] : linear[1];
            if (linear[2] > peak) peak = linear[2];
            double scale = 1;
            if (peak > knee) {
                double excess = peak - knee;
                double mapped = knee + (1 - knee) * excess / (excess + (1 - knee));
                scale = mapped / peak;
            }
            if (gain) {
                double stops = scale < 1 ? -log2(scale) * 4096 + 0.5 : 0;
                gain[(size_t) y * width + x] = (uint16_t) (stops > 65535 ? 65535 : stops);
            }
            for (int i = 0; i < 3; i++) {
                if (tabled) {
                    target[3 * x + i] = tfk_srgb_table[tfk_step(linear[i] * scale)];
                    continue;
                }
                double value = tfk_srgb(linear[i] * scale) * 255 + 0.5;
                target[3 * x + i] = (uint8_t) (value < 0 ? 0 : value > 255 ? 255 : value);
            }
        }
    }
}
