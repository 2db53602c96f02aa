#include "tf_rendition.h"

#include <stdio.h>
#include <string.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "tf_kernels.h"
#include "tf_shim.h"

// Frames one tile may decode past where it started (a seek's keyframe, or the last tile's
// frame): 2 s at 30 fps. A video whose keyframes are further apart than that shows, for a tile,
// the frame this many after its keyframe.
#define TF_SPRITE_FRAMES 60

// One tile's picture into `kept`: the frame at `seconds` (the first at or past it), decoded on
// from where the last tile stopped when the keyframe before `seconds` lies behind that (a clip
// whose keyframes are seconds apart is decoded once, in order), else after a seek to that
// keyframe (taken when it is within half an `interval` of `seconds`). `*position` is the last decoded frame's time (AV_NOPTS_VALUE: none yet). 1 with
// `kept` filled, 0 when no frame came.
static int tf_sprite_frame(TFVideo *video, AVCodecContext *decoder, AVStream *stream, double seconds, double interval, int64_t *position,
                           AVPacket *packet, AVFrame *frame, AVFrame *kept) {
    AVFormatContext *format = tf_video_format(video);
    double base = av_q2d(stream->time_base);
    int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
    int64_t target = start + (int64_t) (seconds / base), near = (int64_t) (interval / 2 / base);
    int onward = 0;
    if (*position != AV_NOPTS_VALUE && *position <= target) {
        int entry = av_index_search_timestamp(stream, target, AVSEEK_FLAG_BACKWARD);
        const AVIndexEntry *keyframe = entry >= 0 ? avformat_index_get_entry(stream, entry) : NULL;
        onward = keyframe ? keyframe->timestamp <= *position : (target - *position) * base <= 2.0;
    }
    if (!onward) {
        if (av_seek_frame(format, stream->index, target, AVSEEK_FLAG_BACKWARD) < 0) av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE);
        avcodec_flush_buffers(decoder);
    }
    av_frame_unref(kept);
    int ended = 0, frames = 0;
    // A bound on the packets one tile reads: a stream that never yields a frame ends here.
    for (int packets = 0; packets < 2000; packets++) {
        if (tf_video_check(video)) return 0;
        if (!ended) {
            if (av_read_frame(format, packet) < 0) {
                ended = 1;
                avcodec_send_packet(decoder, NULL);
            } else {
                if (packet->stream_index == stream->index) avcodec_send_packet(decoder, packet);
                av_packet_unref(packet);
            }
        }
        int received;
        while ((received = avcodec_receive_frame(decoder, frame)) >= 0) {
            int64_t time = frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp : frame->pts;
            *position = time;
            av_frame_unref(kept);
            av_frame_move_ref(kept, frame);
            // After a seek, a keyframe within half an interval of the time will do (a video with
            // keyframes a second apart costs a frame a tile); on from the last tile, the time itself.
            if (time == AV_NOPTS_VALUE || time >= (onward ? target : target - near) || ++frames >= TF_SPRITE_FRAMES) return 1;
        }
        if (received == AVERROR_EOF || (ended && received != AVERROR(EAGAIN))) return kept->data[0] != NULL;
    }
    return kept->data[0] != NULL;
}

// Copies a coded-orientation tile (`width` × `height` RGB) into the sheet at (x, y), turned
// `rotation` degrees clockwise.
static void tf_sprite_place(const uint8_t *tile, int width, int height, int rotation, uint8_t *sheet, int sheet_width, int x, int y) {
    int quarter = rotation == 90 || rotation == 270;
    int display_width = quarter ? height : width, display_height = quarter ? width : height;
    for (int dy = 0; dy < display_height; dy++) {
        uint8_t *row = sheet + ((size_t) (y + dy) * (size_t) sheet_width + (size_t) x) * 3;
        for (int dx = 0; dx < display_width; dx++) {
            int cx, cy;
            switch (rotation) {
            case 90: cx = dy, cy = height - 1 - dx; break;
            case 180: cx = width - 1 - dx, cy = height - 1 - dy; break;
            case 270: cx = width - 1 - dy, cy = dx; break;
            default: cx = dx, cy = dy; break;
            }
            memcpy(row + (size_t) dx * 3, tile + ((size_t) cy * (size_t) width + (size_t) cx) * 3, 3);
        }
    }
}

int tf_video_sprite(TFVideo *video, const TFSpriteSettings *s, uint8_t *pixels, int *stopped, char *error, size_t error_length) {
    *stopped = 0;
    error[0] = 0;
    AVFormatContext *format = tf_video_format(video);
    if (s->video_stream < 0 || (unsigned) s->video_stream >= format->nb_streams || s->count < 1 || s->columns < 1) {
        snprintf(error, error_length, "no video stream to draw");
        return AVERROR(EINVAL);
    }
    tf_video_rearm(video, s->timeout_seconds, s->stop);
    AVStream *stream = format->streams[s->video_stream];
    for (unsigned i = 0; i < format->nb_streams; i++)
        format->streams[i]->discard = (int) i == s->video_stream ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    const AVCodec *codec = avcodec_find_decoder(stream->codecpar->codec_id);
    AVCodecContext *decoder = codec ? avcodec_alloc_context3(codec) : NULL;
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc(), *kept = av_frame_alloc();
    int64_t position = AV_NOPTS_VALUE;
    int quarter = s->rotation == 90 || s->rotation == 270;
    // The tile as coded (before it is turned).
    int width = quarter ? s->tile_height : s->tile_width, height = quarter ? s->tile_width : s->tile_height;
    uint16_t *wide = s->transfer ? av_malloc((size_t) width * (size_t) height * 6) : NULL;
    uint8_t *tile = av_malloc((size_t) width * (size_t) height * 3);
    struct SwsContext *scaler = NULL;
    int result = 0;
    if (!decoder || !packet || !frame || !kept || !tile || (s->transfer && !wide)) {
        result = AVERROR(ENOMEM);
        goto done;
    }
    if ((result = avcodec_parameters_to_context(decoder, stream->codecpar)) < 0) goto done;
    decoder->pkt_timebase = stream->time_base;
    decoder->thread_count = 1;
    tf_video_limit_frames(decoder, s->max_pixels);
    if ((result = avcodec_open2(decoder, codec, NULL)) < 0) goto done;
    int sheet_width = s->columns * s->tile_width;
    int drawn = 0;
    for (int index = 0; index < s->count; index++) {
        if (!tf_sprite_frame(video, decoder, stream, index * s->interval, s->interval, &position, packet, frame, kept)) {
            if (tf_video_check(video)) break;
            continue; // past the last keyframe: the tile stays black
        }
        const AVPixFmtDescriptor *descriptor = av_pix_fmt_desc_get(kept->format);
        int space = kept->colorspace;
        if (space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RESERVED || space > AVCOL_SPC_BT2020_CL)
            space = s->transfer ? AVCOL_SPC_BT2020_NCL : kept->height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
        int full = kept->color_range == AVCOL_RANGE_JPEG || (descriptor && strstr(descriptor->name, "yuvj") == descriptor->name);
        scaler = sws_getCachedContext(scaler, kept->width, kept->height, kept->format, width, height,
                                      s->transfer ? AV_PIX_FMT_RGB48LE : AV_PIX_FMT_RGB24, SWS_BICUBIC, NULL, NULL, NULL);
        if (!scaler) {
            snprintf(error, error_length, "cannot convert the video's pixel format to RGB");
            result = AVERROR(EINVAL);
            goto done;
        }
        sws_setColorspaceDetails(scaler, sws_getCoefficients(space), full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
        uint8_t *planes[4] = {s->transfer ? (uint8_t *) wide : tile, NULL, NULL, NULL};
        int strides[4] = {width * (s->transfer ? 6 : 3), 0, 0, 0};
        sws_scale(scaler, (const uint8_t *const *) kept->data, kept->linesize, 0, kept->height, planes, strides);

        if (s->transfer) tfk_tonemap_rgb48_frames(wide, (size_t) width * 6, width, height, (TFKTransfer) s->transfer, tile);
        tf_sprite_place(tile, width, height, s->rotation, pixels, sheet_width, (index % s->columns) * s->tile_width,
                        (index / s->columns) * s->tile_height);
        drawn++;
    }
    if (tf_video_check(video)) {
        *stopped = tf_video_stopped(video);
        snprintf(error, error_length, "stopped");
        result = AVERROR_EXIT;
    } else if (drawn == 0) {
        int refused_width, refused_height;
        if (tf_video_refused_size(&refused_width, &refused_height))
            snprintf(error, error_length, "a frame of %d×%d pixels is over the bound", refused_width, refused_height);
        else
            snprintf(error, error_length, "no keyframe could be decoded");
        result = AVERROR_INVALIDDATA;
    }
done:
    if (result < 0 && error[0] == 0) tf_av_error_text(result, error, error_length);
    sws_freeContext(scaler);
    av_free(tile);
    av_free(wide);
    av_frame_free(&frame);
    av_frame_free(&kept);
    av_packet_free(&packet);
    avcodec_free_context(&decoder);
    return result < 0 ? result : 0;
}
