#ifndef TF_RENDITION_H
#define TF_RENDITION_H

// A video's rendition for browsers, written as a fast-start MP4 into a file descriptor: its
// streams copied (a remux) or its picture encoded again as H.264 High by libx264 and its sound as
// AAC (a transcode). No metadata of the source is carried over. Declared to ThumbframeImaging
// alone (THUMBFRAME_IMAGING), as tf_video.h is.
#ifdef THUMBFRAME_IMAGING

#include <stdint.h>
#include <stddef.h>

#include "tf_video.h"

/// What to write.
typedef struct {
    /// 0: copy the video stream and the first audio stream; 1: H.264 + AAC (an AAC stream is copied).
    int transcode;
    /// 1: the container keeps no presentation times (Delivery.transcodedContainers: AVI): the
    /// picture is encoded whatever its codec, each at its number's time.
    int timeless;
    /// The index of the video stream to take (the prober's choice).
    int video_stream;
    /// Transcode: the coded picture's long side at most this (0: as it is); never enlarged.
    int max_side;
    /// Transcode: x264's constant rate factor and preset, and its threads (fixed, not the
    /// machine's: x264's bytes depend on its thread count).
    int crf;
    const char *preset;
    int threads;
    /// Transcode: 1 (PQ) or 2 (HLG) tone-maps BT.2020 to BT.709 SDR as posters are (tfk_tonemap_rgb48); 0 SDR.
    int transfer;
    /// Every decoded picture's pixels at most this (the decoder's max_pixels).
    int64_t max_pixels;
    /// Copy: the packets may add up to no more than this many bytes (0: no bound).
    int64_t max_packet_bytes;
    /// The time this rendition may take (0: none), counted from this call; and the build's stop flag.
    double timeout_seconds;
    const int *stop;
} TFRenditionSettings;

/// What was written.
typedef struct {
    /// The coded picture of the written video (before its display matrix turns it).
    int width;
    int height;
    /// Seconds of the written video stream.
    double duration;
    /// The file's size.
    int64_t bytes;
    /// RFC 6381 codecs of the written streams, comma-separated (`avc1.640028,mp4a.40.2`).
    char codecs[96];
    /// Why it stopped early: a TFStopReason.
    int stopped;
    /// The errno of a write to `fd` that failed (ENOSPC, EDQUOT, EIO, ...), else 0: OUT_DIR's
    /// failure, not the video's.
    int write_errno;
} TFRenditionResult;

/// Writes the rendition of the open container `video` into `fd` (a new empty file opened for
/// reading and writing: the index is moved before the media data in a second pass that reads
/// it back), with `pwrite`/`pread` at offsets of its own (the descriptor's offset is unused).
/// 0 on success; a negative FFmpeg error and its one-line reason in `error` otherwise.
int tf_video_write_rendition(TFVideo *video, int fd, const TFRenditionSettings *settings, TFRenditionResult *result, char *error,
                             size_t error_length);

/// What a scrub sprite sheet is made of: `count` tiles, the frame at each `index × interval`
/// seconds, each `tile_width` × `tile_height` (display orientation), in rows
/// of `columns`, turned upright by `rotation` (degrees clockwise: 0, 90, 180, 270).
typedef struct {
    int video_stream;
    int count;
    double interval;
    int tile_width;
    int tile_height;
    int columns;
    int rotation;
    /// 1 (PQ) or 2 (HLG): tone-mapped as posters are; 0 SDR.
    int transfer;
    int64_t max_pixels;
    double timeout_seconds;
    const int *stop;
} TFSpriteSettings;

/// Draws the sprite sheet of the open container `video` into `pixels`: packed 8-bit RGB,
/// `columns × tile_width` wide and `ceil(count / columns) × tile_height` high (black where no
/// tile is). Each tile is decoded on from the last one's frame, or after a seek to the keyframe
/// before it when that lies further on (at most 60 frames a tile past where it starts), scaled
/// by FFmpeg's bicubic scaler in the video's own matrix. 0 on success; a negative
/// FFmpeg error and its reason in `error` otherwise (`*stopped`: a TFStopReason).
int tf_video_sprite(TFVideo *video, const TFSpriteSettings *settings, uint8_t *pixels, int *stopped, char *error, size_t error_length);

/// RFC 6381 codecs of a video stream and an optional audio stream as MP4 carries them
/// (`hvc1.2.4.L153.B0,mp4a.40.2`) into `out`; 0 when one of them has no such name here.
int tf_video_codecs(const AVCodecParameters *video, const AVCodecParameters *audio, char *out, size_t length);

#endif // THUMBFRAME_IMAGING
#endif
