#include "tf_rendition.h"

#include <stdio.h>
#include <string.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "tf_kernels.h"
#include "tf_shim.h"

// Frames one tile may decode past the time it is for before it gives up (a stream whose
// timestamps never reach it): 2 s at 30 fps.
#define TF_SPRITE_FRAMES 60

// One tile's picture into `kept`: the first frame at or past `seconds` (half a frame's tolerance
// for rounding), so that each tile shows its cue's own time. Decoded on from where the last tile
// stopped when the keyframe before `seconds` lies behind that (a clip whose keyframes are seconds
// apart is decoded once, in order), else after a seek to that keyframe. A seek that lands past
// the time (a container without a keyframe index, as MPEG-TS, seeks by timestamp to a frame the
// decoder cannot start from, and its first picture is the next keyframe's) is made again, twice
// as far before the time each time, from the first byte at the last. `*position` is the last
// decoded frame's time (AV_NOPTS_VALUE: none yet). 1 with `kept` filled, 0 when no frame came.
static int tf_sprite_frame(TFVideo *video, AVCodecContext *decoder, AVStream *stream, double seconds, int64_t *position, AVPacket *packet,
                           AVFrame *frame, AVFrame *kept) {
    AVFormatContext *format = tf_video_format(video);
    double base = av_q2d(stream->time_base);
    double rate = av_q2d(stream->avg_frame_rate) > 0 ? av_q2d(stream->avg_frame_rate) : 30;
    int64_t start = stream->start_time == AV_NOPTS_VALUE ? 0 : stream->start_time;
    int64_t target = start + (int64_t) (seconds / base);
    int64_t tolerance = (int64_t) (0.5 / rate / base);
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
    int ended = 0, frames = 0, limit = TF_SPRITE_FRAMES;
    int64_t first = AV_NOPTS_VALUE; // the first frame's time since the decode (re)started
    double back = 0;                // how far before the time the last seek again went (seconds)
    // A bound on the packets one tile reads: a stream that never yields a frame ends here.
    for (int packets = 0; packets < 2000 + limit; packets++) {
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
            if (first == AV_NOPTS_VALUE && time != AV_NOPTS_VALUE) {
                if (!onward && time > target + tolerance && back < 3600) {
                    back = back == 0 ? 2 : back * 2;
                    int64_t earlier = target - (int64_t) (back / base);
                    if (earlier <= start || av_seek_frame(format, stream->index, earlier, AVSEEK_FLAG_BACKWARD) < 0) {
                        av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE);
                        back = 3600;
                    }
                    avcodec_flush_buffers(decoder);
                    av_frame_unref(frame);
                    ended = 0;
                    break;
                }
                // The frames from here to the time are decoded, and no more than the allowance after.
                first = time;
                if (time < target) limit = TF_SPRITE_FRAMES + (int) ((double) (target - time) * base * rate + 1);
            }
            *position = time;
            av_frame_unref(kept);
            av_frame_move_ref(kept, frame);
            if (time == AV_NOPTS_VALUE || time >= target - tolerance || ++frames >= limit) return 1;
        }
        if (received == AVERROR_EOF || (ended && received != AVERROR(EAGAIN))) {
            // The stream's end after a seek without a picture (no keyframe after where it landed):
            // once more from the first byte.
            if (kept->data[0] || onward || back >= 3600) return kept->data[0] != NULL;
            back = 3600;
            av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE);
            avcodec_flush_buffers(decoder);
            ended = 0;
        }
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
        if (!tf_sprite_frame(video, decoder, stream, index * s->interval, &position, packet, frame, kept)) {
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
