/* The step HDR stills share (HEIF in heif.c, JPEG XL in jxl.c): a picture's 16-bit BT.2020 signal
 * resized and tone-mapped to 8-bit sRGB. Not part of the module's interface. */
#ifndef TF_HDR_H
#define TF_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "tf_hdr.h"

/* `signal` (`w` x `h` RGB, 16 bits full scale, `transfer` 16 PQ or 18 HLG, `primaries` an
 * H.273 colour primaries code: 1 BT.709, 11 or 12 P3, else BT.2020) resized with Lanczos3 to
 * `width` x `height` and tone-mapped (tfk_tonemap_rgb48_gain_from) into `out`, with its gain map
 * when `gain` is set. 0, or -1 with a reason in `error`. */
int tf_hdr_box(const uint16_t *signal, int w, int h, int transfer, int primaries, int width, int height, int gain, TFHdrBox *out,
               char *error, size_t error_length);

#endif
