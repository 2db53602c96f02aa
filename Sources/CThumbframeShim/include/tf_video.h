#ifndef TF_VIDEO_H
#define TF_VIDEO_H

// What Swift cannot do with FFmpeg's C API directly: an AVIOContext whose callbacks read a file
// descriptor with pread (a video is never read whole into memory), an interrupt callback that
// enforces the decode deadline and the build's cancellation, and FFmpeg's error macros.
// Declared to ThumbframeImaging alone (THUMBFRAME_IMAGING), as tf_shim.h is.
#ifdef THUMBFRAME_IMAGING

#include <stdint.h>
#include <stddef.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

/// An open container: the format context and what its callbacks read.
typedef struct TFVideo TFVideo;

/// Opens the container in `fd` — `size` bytes from `offset` (0 for a video file, where an
/// embedded MP4 starts for a Motion Photo) — and reads its stream headers
/// (avformat_find_stream_info), with FFmpeg's logging off and these bounds: at most
/// `probe_bytes` read to probe, every blocking call interrupted once `timeout_seconds` have
/// passed since this call (0: none) or once `*stop` is non-zero. On failure returns NULL and
/// writes the reason (one line) into `error`; `*stopped` says whether the deadline (1) or the
/// stop flag (2) cut it short.
TFVideo *tf_video_open(int fd, int64_t offset, int64_t size, int64_t probe_bytes, double timeout_seconds, const int *stop, int *stopped,
                       char *error, size_t error_length);

/// The format context of an open container (owned by it).
AVFormatContext *tf_video_format(TFVideo *video);

/// Why the last interrupted call stopped: 0 none, 1 the deadline, 2 the stop flag.
int tf_video_stopped(TFVideo *video);

/// Bounds every picture `context` decodes to `max_pixels` (FFmpeg's max_pixels, checked whenever a
/// stream changes size, before the decoder allocates for it), and forgets any size refused before.
void tf_video_limit_frames(AVCodecContext *context, int64_t max_pixels);

/// Whether a decoder on this thread refused a picture for tf_video_limit_frames' bound since it
/// was set, and its size.
int tf_video_refused_size(int *width, int *height);

/// Starts the deadline again: every blocking call (and `tf_video_check`) stops once
/// `timeout_seconds` have passed from now (0: none) or once `*stop` is non-zero.
void tf_video_rearm(TFVideo *video, double timeout_seconds, const int *stop);

/// 1 once the deadline has passed or the stop flag is set (`tf_video_stopped` says which), else 0.
int tf_video_check(TFVideo *video);

/// Closes the container and frees everything tf_video_open made.
void tf_video_close(TFVideo *video);

/// FFmpeg's AVERROR(EAGAIN) and AVERROR_EOF (macros Swift cannot import).
int tf_averror_eagain(void);
int tf_averror_eof(void);

/// av_strerror's text for an FFmpeg error code.
void tf_av_error_text(int code, char *text, size_t length);

/// The stream's display matrix rotation in degrees counter-clockwise (av_display_rotation_get),
/// or 0 when the stream has no display matrix or one that is not a turn by quarters (then
/// `*ignored` is 1); `*mirrored` is 1 when the matrix flips.
double tf_video_rotation(AVStream *stream, int *mirrored, int *ignored);

/// Seeks the container back to the start of stream `stream_index` (its first time, else the
/// first byte), for reading from the first frame.
void tf_video_rewind(AVFormatContext *format, int stream_index);

/// Seconds from the stream's start to the end of its last frame, read from the packets after a
/// seek to its last keyframe (each packet's time plus its duration, or `frame_seconds`): what the
/// frames say, whatever the header claims. -1 when no packet tells. The container is left at its
/// start.
double tf_video_frames_end(AVFormatContext *format, int stream_index, double frame_seconds);

/// 1 for a picture every browser decodes in MP4: 8-bit 4:2:0 H.264, 8- or 10-bit 4:2:0 VP9 and
/// AV1; 0 for any other (High 10 or 4:2:2 H.264, HEVC, ...).
int tf_video_browser_picture(const AVCodecParameters *p);

/// 1 when the 3×3 display matrix (16.16 and 2.30 fixed point, as in ISO BMFF) turns the picture by
/// a multiple of 90° (flipped or not) and does nothing else; 0 for anything else.
int tf_display_matrix_is_quarter(const int32_t *matrix);

#endif // THUMBFRAME_IMAGING
#endif
