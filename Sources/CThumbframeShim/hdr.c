/* The step HDR stills share: their 16-bit signal (BT.2020, P3 or BT.709 primaries) resized and tone-mapped to 8-bit sRGB. */
#include "hdr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_kernels.h"
#include "tf_shim.h"

void tf_hdr_box_free(TFHdrBox *box) {
    free(box->pixels);
    free(box->gain);
    memset(box, 0, sizeof *box);
}

/* The gain (in stops) the roll-off takes from a pixel at 1.1 × SDR white (tfk_tonemap's knee at
 * 0.75, approaching 1): a picture whose brightest is within 10 % of SDR white (a resize's ringing,
 * code values rounded near white) has nothing above SDR white worth a map. */
static double tf_gain_floor(void) {
    const double knee = 0.75, peak = 1.1, excess = peak - knee;
    return -log2((knee + (1 - knee) * excess / (excess + (1 - knee))) / peak);
}

/* `stops` (one log2 gain a pixel, in 1/4096 stops) quantized against their largest into
 * `box->gain`, or none when the largest is under tf_gain_floor. */
static int tf_hdr_quantize_gain(const uint16_t *stops, size_t count, TFHdrBox *box) {
    unsigned largest = 0;
    for (size_t i = 0; i < count; i++)
        if (stops[i] > largest) largest = stops[i];
    if (largest < tf_gain_floor() * 4096) return 0;
    if (!(box->gain = malloc(count))) return -1;
    // The map's top code is the largest gain, said to 1/10000 stop as the metadata says it.
    box->gain_stops = ceil(largest / 4096.0 * 10000.0) / 10000.0;
    double scale = 255 / (box->gain_stops * 4096);
    for (size_t i = 0; i < count; i++) {
        double value = stops[i] * scale + 0.5;
        box->gain[i] = (uint8_t) (value > 255 ? 255 : value);
    }
    return 0;
}

int tf_hdr_box(const uint16_t *signal, int w, int h, int transfer, int primaries, int width, int height, int gain, TFHdrBox *out,
               char *error, size_t error_length) {
    memset(out, 0, sizeof *out);
    VipsImage *t[2] = {NULL};
    uint16_t *box = NULL;
    uint16_t *stops = NULL;
    int result = -1;
    // Resized in the signal (Lanczos3), then mapped: one curve evaluation a pixel of the box.
    if (!(t[0] = vips_image_new_from_memory(signal, (size_t) w * h * 3 * 2, w, h, 3, VIPS_FORMAT_USHORT)) ||
        vips_resize(t[0], &t[1], (double) width / w, "vscale", (double) height / h, NULL)) {
        snprintf(error, error_length, "cannot resize the HDR picture: %s", vips_error_buffer());
        vips_error_clear();
        goto done;
    }
    size_t size = 0;
    box = vips_image_write_to_memory(t[1], &size);
    if (!box || size != (size_t) width * height * 6) {
        snprintf(error, error_length, "the HDR picture came out %dx%d, not %dx%d", t[1]->Xsize, t[1]->Ysize, width, height);
        goto done;
    }
    size_t count = (size_t) width * height;
    if (!(out->pixels = malloc(count * 3)) || (gain && !(stops = malloc(count * sizeof *stops)))) {
        snprintf(error, error_length, "out of memory");
        goto done;
    }
    tfk_tonemap_rgb48_gain_from(box, (size_t) width * 6, width, height, transfer == 16 ? TFK_TRANSFER_PQ : TFK_TRANSFER_HLG,
                                tfk_primaries(primaries), out->pixels, stops);
    if (stops && tf_hdr_quantize_gain(stops, count, out)) {
        snprintf(error, error_length, "out of memory");
        goto done;
    }
    result = 0;
done:
    if (result) tf_hdr_box_free(out);
    free(stops);
    g_free(box);
    for (int i = 1; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    return result;
}

int tf_hdr_decode_image(VipsImage *in, int transfer, int primaries, int width, int height, int gain, TFHdrBox *out, char *error,
                        size_t error_length) {
    memset(out, 0, sizeof *out);
    VipsImage *t[3] = {NULL};
    uint16_t *signal = NULL;
    int result = -1;
    // The colour bands' code values at 16 bits, full scale (an 8-bit file's 255 is 65535); no
    // profile is applied: the transfer says what they are.
    if (in->Bands < 3 || vips_extract_band(in, &t[0], 0, "n", 3, NULL)) {
        snprintf(error, error_length, "an HDR picture needs three colour channels");
        goto done;
    }
    if (t[0]->BandFmt == VIPS_FORMAT_UCHAR) {
        if (vips_linear1(t[0], &t[1], 257.0, 0.0, "uchar", FALSE, NULL) || vips_cast_ushort(t[1], &t[2], NULL)) goto failed;
    } else if (vips_cast_ushort(t[0], &t[2], NULL)) {
        goto failed;
    }
    size_t size = 0;
    if (!(signal = vips_image_write_to_memory(t[2], &size)) || size != (size_t) t[2]->Xsize * t[2]->Ysize * 6) goto failed;
    result = tf_hdr_box(signal, t[2]->Xsize, t[2]->Ysize, transfer, primaries, width, height, gain, out, error, error_length);
    goto done;
failed:
    snprintf(error, error_length, "cannot read the HDR picture: %s", vips_error_buffer());
    vips_error_clear();
done:
    g_free(signal);
    for (int i = 2; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    return result;
}
