#ifndef TF_HDR_BOX_H
#define TF_HDR_BOX_H

// What the decode of a PQ or HLG still gives (tf_heif_decode_hdr, tf_jxl_decode_hdr,
// tf_hdr_decode_image): its SDR picture, and when asked, the gain map that makes its HDR one.

#include <stdint.h>

/// A decode box of an HDR still. Both buffers are freed with free().
typedef struct {
    /// `width` * `height` * 3 bytes of 8-bit sRGB: the tone-mapped picture.
    uint8_t *pixels;
    /// `width` * `height` bytes, or NULL (not asked, or nothing brighter than SDR white): each
    /// pixel's log2 gain over `gain_stops`, times 255, rounded. The HDR picture in linear BT.709,
    /// relative to SDR white, is the SDR one's linear light times 2^(value / 255 * gain_stops).
    uint8_t *gain;
    /// log2 of the largest gain (the picture's headroom in stops); 0 without a map.
    double gain_stops;
} TFHdrBox;

/// Frees a box's buffers.
void tf_hdr_box_free(TFHdrBox *box);

#endif
