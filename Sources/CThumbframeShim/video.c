#include "tf_video.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libavutil/display.h>

#include "tf_shim.h"

struct TFVideo {
    AVFormatContext *format;
    AVIOContext *io;
    int fd;
    int64_t base; // where the container starts in the file (a Motion Photo's MP4 after its JPEG)
    int64_t size;
    int64_t position;
    TFDecodeGuard guard;
};

// Reads at the demuxer's position with pread: the descriptor's own offset is never moved, so
// the same descriptor can be hashed by the caller.
static int tf_video_read(void *opaque, uint8_t *buffer, int size) {
    TFVideo *video = opaque;
    if (video->position >= video->size) return AVERROR_EOF;
    if ((int64_t) size > video->size - video->position) size = (int) (video->size - video->position);
    ssize_t got;
    do {
        got = pread(video->fd, buffer, (size_t) size, video->base + video->position);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return AVERROR(errno);
    if (got == 0) return AVERROR_EOF;
    video->position += got;
    return (int) got;
}

static int64_t tf_video_seek(void *opaque, int64_t offset, int whence) {
    TFVideo *video = opaque;
    int64_t target;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return video->size;
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = video->position + offset; break;
    case SEEK_END: target = video->size + offset; break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0) return AVERROR(EINVAL);
    video->position = target;
    return target;
}

// Called by FFmpeg inside every blocking operation: non-zero stops it.
static int tf_video_interrupt(void *opaque) {
    TFVideo *video = opaque;
    return tf_guard_check(&video->guard);
}

// Which of the bounds below a demuxer ran into on this thread: it returns only ENOMEM ("Cannot
// allocate memory"), and says which bound in its log (before further lines of its own).
static __thread int tf_av_bound_hit;
#define TF_AV_STREAMS 1
#define TF_AV_INDEX 2

// The last picture size a decoder refused on this thread for its max_pixels (tf_video_limit_frames).
static __thread unsigned tf_av_refused_width, tf_av_refused_height;

static void tf_av_log(void *context, int level, const char *format, va_list arguments) {
    (void) context;
    if (level > AV_LOG_ERROR || !format) return;
    if (strstr(format, "max_streams")) tf_av_bound_hit |= TF_AV_STREAMS;
    if (strstr(format, "max_index_size") || strstr(format, "index")) tf_av_bound_hit |= TF_AV_INDEX;
    // av_image_check_size2: "Picture size %ux%u exceeds specified max pixel count %"PRId64...
    if (strstr(format, "exceeds specified max pixel count")) {
        va_list copy;
        va_copy(copy, arguments);
        tf_av_refused_width = va_arg(copy, unsigned);
        tf_av_refused_height = va_arg(copy, unsigned);
        va_end(copy);
    }
}

void tf_video_limit_frames(AVCodecContext *context, int64_t max_pixels) {
    context->max_pixels = max_pixels;
    tf_av_refused_width = tf_av_refused_height = 0;
}

int tf_video_refused_size(int *width, int *height) {
    *width = (int) tf_av_refused_width;
    *height = (int) tf_av_refused_height;
    return tf_av_refused_width > 0 && tf_av_refused_height > 0;
}

static void tf_av_log_install(void) { av_log_set_callback(tf_av_log); }

void tf_av_error_text(int code, char *text, size_t length) {
    if (av_strerror(code, text, length) < 0) snprintf(text, length, "error %d", code);
}

TFVideo *tf_video_open(int fd, int64_t offset, int64_t size, int64_t probe_bytes, double timeout_seconds, const int *stop, int *stopped,
                       char *error, size_t error_length) {
    static pthread_once_t log_once = PTHREAD_ONCE_INIT;
    pthread_once(&log_once, tf_av_log_install);
    tf_av_bound_hit = 0;
    *stopped = 0;
    TFVideo *video = av_mallocz(sizeof(TFVideo));
    if (!video) {
        snprintf(error, error_length, "out of memory");
        return NULL;
    }
    video->fd = fd;
    video->base = offset;
    video->size = size;
    video->guard = tf_guard_start(timeout_seconds, stop);
    const int buffer_size = 64 * 1024;
    uint8_t *buffer = av_malloc(buffer_size);
    video->format = avformat_alloc_context();
    if (buffer) video->io = avio_alloc_context(buffer, buffer_size, 0, video, tf_video_read, NULL, tf_video_seek);
    if (!buffer || !video->format || !video->io) {
        if (!video->io) av_free(buffer);
        snprintf(error, error_length, "out of memory");
        tf_video_close(video);
        return NULL;
    }
    video->format->pb = video->io;
    video->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    video->format->interrupt_callback.callback = tf_video_interrupt;
    video->format->interrupt_callback.opaque = video;
    video->format->probesize = probe_bytes;
    video->format->max_analyze_duration = 5 * AV_TIME_BASE;
    // Bounds a hostile container's index and stream count before they are allocated.
    video->format->max_streams = 64;
    video->format->max_index_size = 4 << 20;
    int result = avformat_open_input(&video->format, NULL, NULL, NULL);
    if (result < 0) {
        // avformat_open_input freed the context on failure.
        video->format = NULL;
    } else {
        result = avformat_find_stream_info(video->format, NULL);
    }
    if (result < 0) {
        *stopped = video->guard.stopped;
        char text[128];
        tf_av_error_text(result, text, sizeof text);
        if (result == AVERROR(ENOMEM) && (tf_av_bound_hit & TF_AV_STREAMS))
            snprintf(error, error_length, "more than 64 streams (thumbframe reads at most 64, a bound against hostile containers)");
        else if (result == AVERROR(ENOMEM) && (tf_av_bound_hit & TF_AV_INDEX))
            snprintf(error, error_length, "its index is larger than thumbframe reads (4 MiB, a bound against hostile containers)");
        else
            snprintf(error, error_length, "%s", text);
        tf_video_close(video);
        return NULL;
    }
    return video;
}

AVFormatContext *tf_video_format(TFVideo *video) { return video->format; }

int tf_video_stopped(TFVideo *video) { return video->guard.stopped; }

void tf_video_rearm(TFVideo *video, double timeout_seconds, const int *stop) { video->guard = tf_guard_start(timeout_seconds, stop); }

int tf_video_check(TFVideo *video) { return tf_guard_check(&video->guard); }

void tf_video_close(TFVideo *video) {
    if (!video) return;
    if (video->format) avformat_close_input(&video->format);
    if (video->io) {
        av_freep(&video->io->buffer);
        avio_context_free(&video->io);
    }
    av_free(video);
}

int tf_averror_eagain(void) { return AVERROR(EAGAIN); }

int tf_averror_eof(void) { return AVERROR_EOF; }

void tf_video_rewind(AVFormatContext *format, int stream_index) {
    // AVI's demuxer takes a seek to INT64_MIN for one past its end (and reads on from there): it
    // seeks by the stream's first time through its index. Others seek to INT64_MIN exactly, where
    // a seek to the first time may land past it (MPEG-TS finds a time by bisecting the bytes).
    AVStream *stream = stream_index >= 0 && (unsigned) stream_index < format->nb_streams ? format->streams[stream_index] : NULL;
    if (stream && strcmp(format->iformat->name, "avi") == 0) {
        int64_t start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
        if (av_seek_frame(format, stream_index, start, AVSEEK_FLAG_BACKWARD) >= 0) return;
    }
    if (av_seek_frame(format, -1, INT64_MIN, AVSEEK_FLAG_BACKWARD) >= 0) return;
    av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE);
}

double tf_video_frames_end(AVFormatContext *format, int stream_index, double frame_seconds) {
    if (stream_index < 0 || (unsigned) stream_index >= format->nb_streams) return -1;
    AVStream *stream = format->streams[stream_index];
    double base = av_q2d(stream->time_base);
    int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
    int64_t end = AV_NOPTS_VALUE;
    AVPacket *packet = av_packet_alloc();
    if (packet && av_seek_frame(format, stream_index, INT64_MAX, AVSEEK_FLAG_BACKWARD) >= 0) {
        // The last keyframe's group: at most this many packets (a stream whose index points far
        // before its end is read that far and no further).
        for (int packets = 0; packets < 20000 && av_read_frame(format, packet) >= 0; packets++) {
            if (packet->stream_index == stream_index) {
                int64_t time = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
                if (time != AV_NOPTS_VALUE) {
                    int64_t last = time + (packet->duration > 0 ? packet->duration : (int64_t) (frame_seconds / base));
                    if (end == AV_NOPTS_VALUE || last > end) end = last;
                }
            }
            av_packet_unref(packet);
        }
    }
    av_packet_free(&packet);
    // Back to the start for whatever reads next (the poster's search reads on from here): to the
    // stream's first time (AVI's demuxer cannot seek to INT64_MIN and would read on from its end).
    tf_video_rewind(format, stream_index);
    return end == AV_NOPTS_VALUE ? -1 : (double) (end - start) * base;
}

int tf_video_browser_picture(const AVCodecParameters *p) {
    int eight = p->format == AV_PIX_FMT_YUV420P || p->format == AV_PIX_FMT_YUVJ420P;
    switch (p->codec_id) {
    case AV_CODEC_ID_H264: return eight;
    case AV_CODEC_ID_VP9:
    case AV_CODEC_ID_AV1: return eight || p->format == AV_PIX_FMT_YUV420P10LE;
    default: return 0;
    }
}

int tf_display_matrix_is_quarter(const int32_t *matrix) {
    const int32_t one = 1 << 16;
    // The 2×2 part: one ±1 in each row and column, the rest 0; no shear, no scale, no projection.
    for (int i = 0; i < 4; i++) {
        int32_t value = matrix[i < 2 ? i : i + 1];
        if (value != 0 && value != one && value != -one) return 0;
    }
    int rows = (matrix[0] != 0) + (matrix[1] != 0) == 1 && (matrix[3] != 0) + (matrix[4] != 0) == 1;
    int columns = (matrix[0] != 0) + (matrix[3] != 0) == 1 && (matrix[1] != 0) + (matrix[4] != 0) == 1;
    return rows && columns && matrix[2] == 0 && matrix[5] == 0 && matrix[8] == 1 << 30;
}

double tf_video_rotation(AVStream *stream, int *mirrored, int *ignored) {
    *mirrored = 0;
    *ignored = 0;
    size_t size = 0;
    const uint8_t *data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!data || size < 9 * sizeof(int32_t)) return 0;
    const int32_t *matrix = (const int32_t *) data;
    if (!tf_display_matrix_is_quarter(matrix)) {
        *ignored = 1;
        return 0;
    }
    // A negative determinant of the 2×2 part: the picture is mirrored as well as turned.
    double determinant = (double) matrix[0] * matrix[4] - (double) matrix[1] * matrix[3];
    *mirrored = determinant < 0;
    return av_display_rotation_get(matrix);
}
