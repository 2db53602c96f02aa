#include "tf_rendition.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

#include "tf_kernels.h"
#include "tf_shim.h"

// MARK: The output file

// The rendition's file: written and read back (faststart's second pass) with pwrite and pread
// at positions of its own. A reader opened for that pass has its own position on the same fd.
typedef struct {
    int fd;
    int64_t position;
    int failure; // the errno of the first write that failed (a full disk, a quota, EIO)
} TFTarget;

static int tf_target_write(void *opaque, uint8_t *buffer, int size) {
    TFTarget *target = opaque;
    int done = 0;
    while (done < size) {
        ssize_t wrote = pwrite(target->fd, buffer + done, (size_t) (size - done), target->position);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            int code = wrote < 0 ? errno : EIO;
            if (!target->failure) target->failure = code;
            return AVERROR(code);
        }
        done += (int) wrote;
        target->position += wrote;
    }
    return size;
}

static int tf_target_read(void *opaque, uint8_t *buffer, int size) {
    TFTarget *target = opaque;
    ssize_t got;
    do {
        got = pread(target->fd, buffer, (size_t) size, target->position);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return AVERROR(errno);
    if (got == 0) return AVERROR_EOF;
    target->position += got;
    return (int) got;
}

static int64_t tf_target_seek(void *opaque, int64_t offset, int whence) {
    TFTarget *target = opaque;
    struct stat status;
    int64_t size = fstat(target->fd, &status) == 0 ? (int64_t) status.st_size : -1;
    int64_t to;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return size >= 0 ? size : AVERROR(errno);
    case SEEK_SET: to = offset; break;
    case SEEK_CUR: to = target->position + offset; break;
    case SEEK_END:
        if (size < 0) return AVERROR(errno);
        to = size + offset;
        break;
    default: return AVERROR(EINVAL);
    }
    if (to < 0) return AVERROR(EINVAL);
    target->position = to;
    return to;
}

static AVIOContext *tf_target_open(int fd, int writing) {
    const int buffer_size = 256 * 1024;
    TFTarget *target = av_mallocz(sizeof(TFTarget));
    uint8_t *buffer = av_malloc(buffer_size);
    AVIOContext *io = target && buffer ? avio_alloc_context(buffer, buffer_size, writing, target, writing ? NULL : tf_target_read,
                                                            writing ? tf_target_write : NULL, tf_target_seek)
                                       : NULL;
    if (!io) {
        av_free(target);
        av_free(buffer);
        return NULL;
    }
    target->fd = fd;
    return io;
}

static void tf_target_close(AVIOContext **io) {
    if (!*io) return;
    av_freep(&(*io)->opaque);
    av_freep(&(*io)->buffer);
    avio_context_free(io);
}

// The MP4 muxer's faststart pass opens the file again to read what it wrote.
static int tf_target_io_open(AVFormatContext *format, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    (void) url;
    (void) options;
    if (flags & AVIO_FLAG_WRITE) return AVERROR(EPERM);
    const TFTarget *writer = format->pb->opaque;
    *pb = tf_target_open(writer->fd, 0);
    return *pb ? 0 : AVERROR(ENOMEM);
}

static int tf_target_io_close(AVFormatContext *format, AVIOContext *pb) {
    (void) format;
    tf_target_close(&pb);
    return 0;
}

// MARK: Codecs strings

static const uint8_t *tf_annexb_sps(const uint8_t *data, int size) {
    for (int i = 0; i + 4 < size; i++) {
        if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 && (data[i + 3] & 0x1f) == 7) return i + 7 <= size ? data + i + 4 : NULL;
    }
    return NULL;
}

static unsigned tf_reverse_bits(uint32_t value) {
    uint32_t reversed = 0;
    for (int i = 0; i < 32; i++)
        reversed |= ((value >> i) & 1u) << (31 - i);
    return reversed;
}

static int tf_video_codec_string(const AVCodecParameters *video, char *out, size_t length) {
    const uint8_t *extra = video->extradata;
    int size = video->extradata_size;
    int depth = 8;
    const AVPixFmtDescriptor *format = av_pix_fmt_desc_get(video->format);
    if (format) depth = format->comp[0].depth;
    switch (video->codec_id) {
    case AV_CODEC_ID_H264: {
        const uint8_t *sps = extra && size >= 4 && extra[0] == 1 ? extra + 1 : extra ? tf_annexb_sps(extra, size) : NULL;
        if (!sps) return 0;
        snprintf(out, length, "avc1.%02X%02X%02X", sps[0], sps[1], sps[2]);
        return 1;
    }
    case AV_CODEC_ID_HEVC: {
        if (!extra || size < 23 || extra[0] != 1) return 0;
        int space = extra[1] >> 6, tier = (extra[1] >> 5) & 1, profile = extra[1] & 0x1f;
        uint32_t compatible = (uint32_t) extra[2] << 24 | (uint32_t) extra[3] << 16 | (uint32_t) extra[4] << 8 | extra[5];
        int written = snprintf(out, length, "hvc1.%s%d.%X.%c%d", space ? (const char[]){(char) ('A' + space - 1), 0} : "", profile,
                               tf_reverse_bits(compatible), tier ? 'H' : 'L', extra[12]);
        int last = 11; // the six constraint bytes, trailing zero bytes left out
        while (last >= 6 && extra[last] == 0)
            last--;
        for (int i = 6; i <= last && written > 0 && (size_t) written < length; i++)
            written += snprintf(out + written, length - (size_t) written, ".%02X", extra[i]);
        return written > 0 && (size_t) written < length;
    }
    case AV_CODEC_ID_VP9:
        snprintf(out, length, "vp09.%02d.%02d.%02d", video->profile >= 0 ? video->profile : 0, video->level > 0 ? video->level : 10, depth);
        return 1;
    case AV_CODEC_ID_AV1:
        snprintf(out, length, "av01.%d.%02dM.%02d", video->profile >= 0 ? video->profile : 0, video->level >= 0 ? video->level : 8, depth);
        return 1;
    default: return 0;
    }
}

static int tf_audio_codec_string(const AVCodecParameters *audio, char *out, size_t length) {
    switch (audio->codec_id) {
    case AV_CODEC_ID_AAC: {
        // The audio object type: AudioSpecificConfig's first five bits, else the profile (AAC LC).
        int type = audio->extradata && audio->extradata_size >= 2 ? audio->extradata[0] >> 3 : audio->profile >= 0 ? audio->profile + 1 : 2;
        snprintf(out, length, "mp4a.40.%d", type > 0 && type < 31 ? type : 2);
        return 1;
    }
    case AV_CODEC_ID_MP3: snprintf(out, length, "mp4a.6B"); return 1;
    case AV_CODEC_ID_OPUS: snprintf(out, length, "opus"); return 1;
    default: return 0;
    }
}

int tf_video_codecs(const AVCodecParameters *video, const AVCodecParameters *audio, char *out, size_t length) {
    char picture[64], sound[32];
    if (!tf_video_codec_string(video, picture, sizeof picture)) return 0;
    if (!audio) {
        snprintf(out, length, "%s", picture);
        return 1;
    }
    if (!tf_audio_codec_string(audio, sound, sizeof sound)) return 0;
    snprintf(out, length, "%s,%s", picture, sound);
    return 1;
}

// MARK: The rendition

// One output stream and how its packets are made.
typedef struct {
    int input;  // the input stream's index
    int output; // the output stream's index
    AVCodecContext *decoder;
    AVCodecContext *encoder; // NULL: the packets are copied
    int64_t last_dts;        // copy: in the output's time base
    int64_t next_pts;        // audio encode: in samples
    int64_t copied;          // copy: bytes so far
    int keyed;               // copy of the video: its first keyframe has been copied
    // Copy: the first packets without a decode time (Matroska stores presentation times only,
    // and FFmpeg infers decode times once it has seen the reordering), held until one has one.
    AVPacket *held[16];
    int held_count;
    int dated;         // a packet with a decode time has been seen
    int64_t input_dts; // the last decode time, in the input's time base
} TFTrack;

typedef struct {
    TFVideo *video;
    const TFRenditionSettings *settings;
    AVFormatContext *input;
    AVFormatContext *output;
    TFTrack tracks[2]; // video, then audio
    int track_count;
    int64_t start;     // the container's start time, AV_TIME_BASE: subtracted from every timestamp
    int64_t last_pts;  // video encode: the last frame's, in the encoder's time base
    int64_t video_end; // the written video's end (pts + duration), in its output time base
    int timeless;      // an AVI input: no presentation times (its pictures are encoded)
    int64_t pictures;  // timeless: the pictures encoded so far
    struct SwsContext *scaler, *to_rgb, *to_yuv;
    AVFrame *scaled, *rgb48, *rgb24;
    uint8_t *mapped;
    SwrContext *resampler;
    AVAudioFifo *fifo;
    AVFrame *sound;
    AVPacket *packet;
    char *error;
    size_t error_length;
} TFRendition;

static int tf_fail(TFRendition *r, int code, const char *what) {
    if (r->error[0] == 0) {
        char text[128];
        tf_av_error_text(code, text, sizeof text);
        snprintf(r->error, r->error_length, "%s: %s", what, text);
    }
    return code < 0 ? code : AVERROR_EXTERNAL;
}

// The even size of the coded picture, its long side at most max_side, widened by a non-square
// sample aspect ratio (the output's pixels are square).
static void tf_rendition_size(const AVCodecParameters *p, int max_side, int *width, int *height) {
    double w = p->width, h = p->height;
    if (p->sample_aspect_ratio.num > 0 && p->sample_aspect_ratio.den > 0) w = w * p->sample_aspect_ratio.num / p->sample_aspect_ratio.den;
    double longest = w > h ? w : h;
    double scale = max_side > 0 && longest > max_side ? max_side / longest : 1;
    *width = (int) (w * scale / 2 + 0.5) * 2;
    *height = (int) (h * scale / 2 + 0.5) * 2;
    if (*width < 2) *width = 2;
    if (*height < 2) *height = 2;
}

static int tf_open_decoder(TFRendition *r, AVStream *stream, int threads, AVCodecContext **out) {
    const AVCodec *codec = avcodec_find_decoder(stream->codecpar->codec_id);
    if (!codec) {
        snprintf(r->error, r->error_length, "no decoder for %s", avcodec_get_name(stream->codecpar->codec_id));
        return AVERROR_DECODER_NOT_FOUND;
    }
    AVCodecContext *context = avcodec_alloc_context3(codec);
    if (!context) return AVERROR(ENOMEM);
    *out = context;
    int result = avcodec_parameters_to_context(context, stream->codecpar);
    if (result < 0) return result;
    context->pkt_timebase = stream->time_base;
    context->thread_count = threads;
    tf_video_limit_frames(context, r->settings->max_pixels);
    return avcodec_open2(context, codec, NULL);
}

static int tf_add_video_encoder(TFRendition *r, TFTrack *track, AVStream *from, AVStream *to) {
    const TFRenditionSettings *s = r->settings;
    int result = tf_open_decoder(r, from, s->threads, &track->decoder);
    if (result < 0) return tf_fail(r, result, "cannot open the video decoder");
    const AVCodec *codec = avcodec_find_encoder_by_name("libx264");
    if (!codec) {
        snprintf(r->error, r->error_length, "this FFmpeg has no libx264");
        return AVERROR_ENCODER_NOT_FOUND;
    }
    AVCodecContext *encoder = avcodec_alloc_context3(codec);
    if (!encoder) return AVERROR(ENOMEM);
    track->encoder = encoder;
    tf_rendition_size(from->codecpar, s->max_side, &encoder->width, &encoder->height);
    encoder->pix_fmt = AV_PIX_FMT_YUV420P;
    encoder->sample_aspect_ratio = (AVRational){1, 1};
    encoder->time_base = from->time_base;
    AVRational rate = from->avg_frame_rate.num > 0 && from->avg_frame_rate.den > 0 ? from->avg_frame_rate : from->r_frame_rate;
    if (rate.num > 0 && rate.den > 0) encoder->framerate = rate;
    if (s->transfer) {
        encoder->color_primaries = AVCOL_PRI_BT709;
        encoder->color_trc = AVCOL_TRC_BT709;
        encoder->colorspace = AVCOL_SPC_BT709;
    } else {
        encoder->color_primaries = from->codecpar->color_primaries;
        encoder->color_trc = from->codecpar->color_trc;
        encoder->colorspace = from->codecpar->color_space;
    }
    encoder->color_range = AVCOL_RANGE_MPEG;
    encoder->thread_count = s->threads;
    encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER | AV_CODEC_FLAG_BITEXACT;
    av_opt_set(encoder->priv_data, "preset", s->preset, 0);
    av_opt_set(encoder->priv_data, "profile", "high", 0);
    av_opt_set_double(encoder->priv_data, "crf", s->crf, 0);
    if ((result = avcodec_open2(encoder, codec, NULL)) < 0) return tf_fail(r, result, "cannot open libx264");
    if ((result = avcodec_parameters_from_context(to->codecpar, encoder)) < 0) return result;
    to->time_base = encoder->time_base;
    r->scaled = av_frame_alloc();
    if (!r->scaled) return AVERROR(ENOMEM);
    r->scaled->format = encoder->pix_fmt;
    r->scaled->width = encoder->width;
    r->scaled->height = encoder->height;
    if ((result = av_frame_get_buffer(r->scaled, 0)) < 0) return result;
    if (s->transfer) {
        r->rgb48 = av_frame_alloc();
        r->rgb24 = av_frame_alloc();
        if (!r->rgb48 || !r->rgb24) return AVERROR(ENOMEM);
        r->rgb48->format = AV_PIX_FMT_RGB48LE;
        r->rgb24->format = AV_PIX_FMT_RGB24;
        r->rgb48->width = r->rgb24->width = encoder->width;
        r->rgb48->height = r->rgb24->height = encoder->height;
        if ((result = av_frame_get_buffer(r->rgb48, 0)) < 0 || (result = av_frame_get_buffer(r->rgb24, 0)) < 0) return result;
    }
    r->last_pts = AV_NOPTS_VALUE;
    return 0;
}

static int tf_add_audio_encoder(TFRendition *r, TFTrack *track, AVStream *from, AVStream *to) {
    int result = tf_open_decoder(r, from, 1, &track->decoder);
    if (result < 0) return tf_fail(r, result, "cannot open the audio decoder");
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
    AVCodecContext *encoder = codec ? avcodec_alloc_context3(codec) : NULL;
    if (!encoder) return AVERROR_ENCODER_NOT_FOUND;
    track->encoder = encoder;
    AVCodecContext *decoder = track->decoder;
    int channels = decoder->ch_layout.nb_channels >= 2 ? 2 : 1;
    static const int rates[] = {48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000};
    int rate = 48000;
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++)
        if (decoder->sample_rate == rates[i]) rate = rates[i];
    av_channel_layout_default(&encoder->ch_layout, channels);
    encoder->sample_rate = rate;
    encoder->sample_fmt = AV_SAMPLE_FMT_FLTP;
    encoder->bit_rate = channels == 2 ? 128000 : 64000;
    encoder->time_base = (AVRational){1, rate};
    encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER | AV_CODEC_FLAG_BITEXACT;
    if ((result = avcodec_open2(encoder, codec, NULL)) < 0) return tf_fail(r, result, "cannot open the AAC encoder");
    if ((result = avcodec_parameters_from_context(to->codecpar, encoder)) < 0) return result;
    to->time_base = encoder->time_base;
    AVChannelLayout in_layout;
    if (decoder->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || decoder->ch_layout.nb_channels == 0)
        av_channel_layout_default(&in_layout, decoder->ch_layout.nb_channels > 0 ? decoder->ch_layout.nb_channels : 1);
    else if ((result = av_channel_layout_copy(&in_layout, &decoder->ch_layout)) < 0)
        return result;
    result = swr_alloc_set_opts2(&r->resampler, &encoder->ch_layout, encoder->sample_fmt, rate, &in_layout, decoder->sample_fmt,
                                 decoder->sample_rate, 0, NULL);
    av_channel_layout_uninit(&in_layout);
    if (result < 0 || (result = swr_init(r->resampler)) < 0) return tf_fail(r, result, "cannot convert the sound");
    r->fifo = av_audio_fifo_alloc(encoder->sample_fmt, channels, encoder->frame_size > 0 ? encoder->frame_size * 4 : 4096);
    r->sound = av_frame_alloc();
    if (!r->fifo || !r->sound) return AVERROR(ENOMEM);
    track->next_pts = AV_NOPTS_VALUE;
    return 0;
}

static void tf_note_end(TFRendition *r, const AVPacket *packet) {
    int64_t end = (packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts) + (packet->duration > 0 ? packet->duration : 0);
    if (end > r->video_end) r->video_end = end;
}

static int tf_write_packets(TFRendition *r, TFTrack *track) {
    AVStream *to = r->output->streams[track->output];
    int result;
    while ((result = avcodec_receive_packet(track->encoder, r->packet)) >= 0) {
        av_packet_rescale_ts(r->packet, track->encoder->time_base, to->time_base);
        r->packet->stream_index = track->output;
        if (track == &r->tracks[0]) tf_note_end(r, r->packet);
        if ((result = av_interleaved_write_frame(r->output, r->packet)) < 0) return tf_fail(r, result, "cannot write the MP4");
    }
    return result == AVERROR(EAGAIN) || result == AVERROR_EOF ? 0 : tf_fail(r, result, "cannot encode");
}

// One decoded picture: scaled (tone-mapped when HDR), stamped, encoded. NULL flushes the encoder.
static int tf_encode_picture(TFRendition *r, TFTrack *track, AVFrame *frame) {
    AVCodecContext *encoder = track->encoder;
    if (!frame) {
        int result = avcodec_send_frame(encoder, NULL);
        return result < 0 && result != AVERROR_EOF ? tf_fail(r, result, "cannot encode") : tf_write_packets(r, track);
    }
    int64_t pts = frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp : frame->pts;
    AVRational base = r->input->streams[track->input]->time_base;
    if (pts == AV_NOPTS_VALUE) {
        AVRational rate = encoder->framerate.num > 0 ? encoder->framerate : (AVRational){30, 1};
        pts = r->last_pts == AV_NOPTS_VALUE ? 0 : r->last_pts + av_rescale_q(1, av_inv_q(rate), base);
    } else if (r->start != AV_NOPTS_VALUE) {
        pts -= av_rescale_q(r->start, AV_TIME_BASE_Q, base);
    }
    // An AVI's decoded pictures are stamped with decode times, late by the frames the decoder
    // holds back for reordering and repeated at the end: AVI is a frame a tick, so each picture
    // is at its number's time, the first at the start.
    if (r->timeless) {
        AVRational rate = encoder->framerate.num > 0 ? encoder->framerate : (AVRational){30, 1};
        pts = av_rescale_q(r->pictures++, av_inv_q(rate), base);
    }
    if (pts < 0 && r->last_pts == AV_NOPTS_VALUE) pts = 0;
    if (r->last_pts != AV_NOPTS_VALUE && pts <= r->last_pts) return 0; // a repeated or late picture
    // A frame of its own each time (the encoder may hold the last one): no copy of the old pixels.
    av_frame_unref(r->scaled);
    r->scaled->format = encoder->pix_fmt;
    r->scaled->width = encoder->width;
    r->scaled->height = encoder->height;
    int result = av_frame_get_buffer(r->scaled, 0);
    if (result < 0) return result;
    const AVPixFmtDescriptor *format = av_pix_fmt_desc_get(frame->format);
    int space = frame->colorspace;
    if (space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RESERVED || space > AVCOL_SPC_BT2020_CL)
        space = r->settings->transfer ? AVCOL_SPC_BT2020_NCL : frame->height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
    int full = frame->color_range == AVCOL_RANGE_JPEG || (format && strstr(format->name, "yuvj") == format->name);
    int flags = SWS_BICUBIC;
    if (r->settings->transfer) {
        r->to_rgb = sws_getCachedContext(r->to_rgb, frame->width, frame->height, frame->format, r->rgb48->width, r->rgb48->height,
                                         AV_PIX_FMT_RGB48LE, flags, NULL, NULL, NULL);
        r->to_yuv = sws_getCachedContext(r->to_yuv, r->rgb24->width, r->rgb24->height, AV_PIX_FMT_RGB24, r->scaled->width,
                                         r->scaled->height, AV_PIX_FMT_YUV420P, flags, NULL, NULL, NULL);
        if (!r->to_rgb || !r->to_yuv) return tf_fail(r, AVERROR(EINVAL), "cannot convert the video's pixel format");
        sws_setColorspaceDetails(r->to_rgb, sws_getCoefficients(space), full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
        sws_setColorspaceDetails(r->to_yuv, sws_getCoefficients(SWS_CS_DEFAULT), 1, sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16,
                                 1 << 16);
        if ((result = av_frame_make_writable(r->rgb24)) < 0) return result;
        sws_scale(r->to_rgb, (const uint8_t *const *) frame->data, frame->linesize, 0, frame->height, r->rgb48->data, r->rgb48->linesize);
        tfk_tonemap_rgb48_frames((const uint16_t *) r->rgb48->data[0], (size_t) r->rgb48->linesize[0], r->rgb48->width, r->rgb48->height,
                                 (TFKTransfer) r->settings->transfer, r->mapped);
        for (int y = 0; y < r->rgb24->height; y++)
            memcpy(r->rgb24->data[0] + (ptrdiff_t) y * r->rgb24->linesize[0], r->mapped + (size_t) y * (size_t) r->rgb24->width * 3,
                   (size_t) r->rgb24->width * 3);
        sws_scale(r->to_yuv, (const uint8_t *const *) r->rgb24->data, r->rgb24->linesize, 0, r->rgb24->height, r->scaled->data,
                  r->scaled->linesize);
    } else {
        r->scaler = sws_getCachedContext(r->scaler, frame->width, frame->height, frame->format, r->scaled->width, r->scaled->height,
                                         AV_PIX_FMT_YUV420P, flags, NULL, NULL, NULL);
        if (!r->scaler) return tf_fail(r, AVERROR(EINVAL), "cannot convert the video's pixel format");
        // The colour matrix is kept (the encoder is tagged with the source's); a full range becomes limited.
        const int *matrix = sws_getCoefficients(space);
        sws_setColorspaceDetails(r->scaler, matrix, full, matrix, 0, 0, 1 << 16, 1 << 16);
        sws_scale(r->scaler, (const uint8_t *const *) frame->data, frame->linesize, 0, frame->height, r->scaled->data, r->scaled->linesize);
    }
    r->scaled->pts = pts;
    r->last_pts = pts;
    if ((result = avcodec_send_frame(encoder, r->scaled)) < 0) return tf_fail(r, result, "cannot encode");
    return tf_write_packets(r, track);
}

// Samples from the FIFO in the encoder's frame size (all that is left when `flush`).
static int tf_encode_sound(TFRendition *r, TFTrack *track, int flush) {
    AVCodecContext *encoder = track->encoder;
    int size = encoder->frame_size > 0 ? encoder->frame_size : 1024;
    while (av_audio_fifo_size(r->fifo) >= size || (flush && av_audio_fifo_size(r->fifo) > 0)) {
        int count = FFMIN(size, av_audio_fifo_size(r->fifo));
        av_frame_unref(r->sound);
        r->sound->nb_samples = count;
        r->sound->format = encoder->sample_fmt;
        r->sound->sample_rate = encoder->sample_rate;
        int result = av_channel_layout_copy(&r->sound->ch_layout, &encoder->ch_layout);
        if (result < 0 || (result = av_frame_get_buffer(r->sound, 0)) < 0) return result;
        if (av_audio_fifo_read(r->fifo, (void **) r->sound->data, count) < count) return AVERROR_BUG;
        r->sound->pts = track->next_pts;
        track->next_pts += count;
        if ((result = avcodec_send_frame(encoder, r->sound)) < 0) return tf_fail(r, result, "cannot encode the sound");
        if ((result = tf_write_packets(r, track)) < 0) return result;
    }
    if (flush) {
        int result = avcodec_send_frame(encoder, NULL);
        if (result < 0 && result != AVERROR_EOF) return tf_fail(r, result, "cannot encode the sound");
        return tf_write_packets(r, track);
    }
    return 0;
}

static int tf_resample(TFRendition *r, TFTrack *track, AVFrame *frame) {
    AVCodecContext *encoder = track->encoder;
    if (track->next_pts == AV_NOPTS_VALUE) {
        int64_t pts = frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp : 0;
        AVRational base = r->input->streams[track->input]->time_base;
        if (r->start != AV_NOPTS_VALUE) pts -= av_rescale_q(r->start, AV_TIME_BASE_Q, base);
        track->next_pts = pts > 0 ? av_rescale_q(pts, base, encoder->time_base) : 0;
    }
    int room = swr_get_out_samples(r->resampler, frame->nb_samples);
    if (room <= 0) return 0;
    uint8_t **samples = NULL;
    int result = av_samples_alloc_array_and_samples(&samples, NULL, encoder->ch_layout.nb_channels, room, encoder->sample_fmt, 0);
    if (result < 0) return result;
    int converted = swr_convert(r->resampler, samples, room, (const uint8_t **) frame->extended_data, frame->nb_samples);
    if (converted > 0 && av_audio_fifo_write(r->fifo, (void **) samples, converted) < converted) converted = AVERROR(ENOMEM);
    av_freep(&samples[0]);
    av_freep(&samples);
    if (converted < 0) return tf_fail(r, converted, "cannot convert the sound");
    return tf_encode_sound(r, track, 0);
}

// A packet (NULL: the end) through the track's decoder and encoder.
static int tf_transcode_packet(TFRendition *r, TFTrack *track, AVPacket *packet, AVFrame *frame) {
    int result = avcodec_send_packet(track->decoder, packet);
    // A damaged packet is passed over, as a player would.
    if (result < 0 && result != AVERROR(EAGAIN) && result != AVERROR_EOF && packet) return 0;
    while ((result = avcodec_receive_frame(track->decoder, frame)) >= 0) {
        if (tf_video_check(r->video)) return AVERROR_EXIT;
        result = track == &r->tracks[0] ? tf_encode_picture(r, track, frame) : tf_resample(r, track, frame);
        av_frame_unref(frame);
        if (result < 0) return result;
    }
    int refused_width, refused_height;
    if (tf_video_refused_size(&refused_width, &refused_height)) {
        snprintf(r->error, r->error_length, "a frame of %d×%d pixels is over the bound of %lld", refused_width, refused_height,
                 (long long) r->settings->max_pixels);
        return AVERROR_INVALIDDATA;
    }
    if (result != AVERROR(EAGAIN) && result != AVERROR_EOF) return 0; // damaged data: go on
    if (!packet) {
        if (track == &r->tracks[0]) return tf_encode_picture(r, track, NULL);
        if (track->next_pts == AV_NOPTS_VALUE) track->next_pts = 0;
        return tf_encode_sound(r, track, 1);
    }
    return 0;
}

// Writes a copied packet whose times are the input's: from the start, in the output's time base,
// decode times increasing.
static int tf_write_copied(TFRendition *r, TFTrack *track, AVPacket *packet) {
    AVStream *from = r->input->streams[track->input];
    AVStream *to = r->output->streams[track->output];
    if (r->start != AV_NOPTS_VALUE) {
        int64_t offset = av_rescale_q(r->start, AV_TIME_BASE_Q, from->time_base);
        packet->pts -= offset;
        packet->dts -= offset;
    }
    av_packet_rescale_ts(packet, from->time_base, to->time_base);
    if (track->last_dts != AV_NOPTS_VALUE && packet->dts <= track->last_dts) {
        packet->dts = track->last_dts + 1;
        if (packet->pts < packet->dts) packet->pts = packet->dts;
    }
    track->last_dts = packet->dts;
    packet->stream_index = track->output;
    if (track == &r->tracks[0]) tf_note_end(r, packet);
    packet->pos = -1;
    int result = av_interleaved_write_frame(r->output, packet);
    return result < 0 ? tf_fail(r, result, "cannot write the MP4") : 0;
}

// One frame's duration in the input stream's time base (a packet's own, else the frame rate's).
static int64_t tf_frame_step(AVStream *from, const AVPacket *packet) {
    if (packet && packet->duration > 0) return packet->duration;
    AVRational rate = from->avg_frame_rate.num > 0 ? from->avg_frame_rate : from->r_frame_rate;
    int64_t step = rate.num > 0 && rate.den > 0 ? av_rescale_q(1, av_inv_q(rate), from->time_base) : 1;
    return step > 0 ? step : 1;
}

// Dates and writes the held packets: one frame apart, the last one frame before `next` (the first
// decode time known; or, at the end, after the earliest presentation time).
static int tf_release_held(TFRendition *r, TFTrack *track, int64_t next) {
    AVStream *from = r->input->streams[track->input];
    int result = 0;
    for (int i = 0; i < track->held_count; i++) {
        AVPacket *held = track->held[i];
        held->dts = next - (int64_t) (track->held_count - i) * tf_frame_step(from, held);
        if (held->pts == AV_NOPTS_VALUE || held->pts < held->dts) held->pts = held->dts;
        track->input_dts = held->dts;
        if (result >= 0) result = tf_write_copied(r, track, held);
        av_packet_free(&track->held[i]);
    }
    track->held_count = 0;
    track->dated = 1;
    return result;
}

// At the end of the input: what is still held, dated from its earliest presentation time.
static int tf_flush_held(TFRendition *r, TFTrack *track) {
    if (track->held_count == 0) return 0;
    int64_t earliest = INT64_MAX;
    for (int i = 0; i < track->held_count; i++)
        if (track->held[i]->pts != AV_NOPTS_VALUE && track->held[i]->pts < earliest) earliest = track->held[i]->pts;
    if (earliest == INT64_MAX) earliest = 0;
    return tf_release_held(r, track, earliest + tf_frame_step(r->input->streams[track->input], NULL));
}

static int tf_copy_packet(TFRendition *r, TFTrack *track, AVPacket *packet) {
    AVStream *from = r->input->streams[track->input];
    track->copied += packet->size;
    if (r->settings->max_packet_bytes > 0 && track->copied > r->settings->max_packet_bytes) {
        snprintf(r->error, r->error_length, "its packets add up to more than the %lld bytes it occupies",
                 (long long) r->settings->max_packet_bytes);
        return AVERROR_INVALIDDATA;
    }
    // The video starts at its first keyframe: pictures before it (a stream cut mid-group) cannot
    // be decoded, and a rendition decodes without an error from its first frame.
    if (track == &r->tracks[0] && !track->keyed) {
        if (!(packet->flags & AV_PKT_FLAG_KEY)) return 0;
        track->keyed = 1;
    }
    if (packet->pts == AV_NOPTS_VALUE && packet->dts == AV_NOPTS_VALUE) return 0; // no time at all: not placeable
    if (!track->dated) {
        // Decode times are not presentation times where frames are reordered: the first packets
        // without one wait for the first that has one, and are dated back from it.
        if (packet->dts == AV_NOPTS_VALUE && track->held_count < (int) FF_ARRAY_ELEMS(track->held)) {
            if (!(track->held[track->held_count] = av_packet_clone(packet))) return AVERROR(ENOMEM);
            track->held_count++;
            return 0;
        }
        int64_t next = packet->dts != AV_NOPTS_VALUE ? packet->dts : packet->pts;
        int result = tf_release_held(r, track, next);
        if (result < 0) return result;
    }
    if (packet->dts == AV_NOPTS_VALUE)
        packet->dts = track->input_dts != AV_NOPTS_VALUE ? track->input_dts + tf_frame_step(from, packet) : packet->pts;
    if (packet->pts == AV_NOPTS_VALUE) packet->pts = packet->dts;
    track->input_dts = packet->dts;
    return tf_write_copied(r, track, packet);
}

static int tf_rendition_run(TFRendition *r, int fd, TFRenditionResult *out) {
    const TFRenditionSettings *s = r->settings;
    AVFormatContext *input = r->input;
    int result = avformat_alloc_output_context2(&r->output, NULL, "mp4", NULL);
    if (result < 0) return result;
    AVFormatContext *output = r->output;
    // No text of its own: bitexact leaves out the muxer's "Lavf…" tag; no metadata is copied.
    output->flags |= AVFMT_FLAG_BITEXACT;
    output->interrupt_callback = input->interrupt_callback;
    output->io_open = tf_target_io_open;
    output->io_close2 = tf_target_io_close;
    if (!(output->pb = tf_target_open(fd, 1))) return AVERROR(ENOMEM);
    r->start = input->start_time;
    if (s->video_stream < 0 || (unsigned) s->video_stream >= input->nb_streams) return AVERROR_STREAM_NOT_FOUND;
    int audio = av_find_best_stream(input, AVMEDIA_TYPE_AUDIO, -1, s->video_stream, NULL, 0);
    int inputs[2] = {s->video_stream, audio};
    for (int i = 0; i < 2; i++) {
        if (inputs[i] < 0) continue;
        AVStream *from = input->streams[inputs[i]];
        AVStream *to = avformat_new_stream(output, NULL);
        if (!to) return AVERROR(ENOMEM);
        TFTrack *track = &r->tracks[i];
        track->input = inputs[i];
        track->output = to->index;
        track->last_dts = AV_NOPTS_VALUE;
        track->input_dts = AV_NOPTS_VALUE;
        r->track_count = i + 1;
        // A transcode encodes what browsers do not play: a picture they play is copied (a camera's
        // H.264 with PCM sound has only its sound encoded), as is AAC sound.
        // A container without presentation times (AVI): its pictures are encoded whatever their
        // codec, since frames reordered in the stream have no times to copy.
        r->timeless = s->timeless;
        int encode = s->transcode &&
                     (i == 0 ? r->timeless || !tf_video_browser_picture(from->codecpar) : from->codecpar->codec_id != AV_CODEC_ID_AAC);
        if (!encode) {
            if ((result = avcodec_parameters_copy(to->codecpar, from->codecpar)) < 0) return result;
            // HEVC as hvc1 (parameter sets in the sample description): what Safari plays.
            to->codecpar->codec_tag = to->codecpar->codec_id == AV_CODEC_ID_HEVC ? MKTAG('h', 'v', 'c', '1') : 0;
            to->time_base = from->time_base;
        } else if ((result = i == 0 ? tf_add_video_encoder(r, track, from, to) : tf_add_audio_encoder(r, track, from, to)) < 0) {
            return result;
        }
        if (i == 0) {
            // The display matrix is how the picture is turned, not metadata about anyone: kept
            // when it turns by quarters (as the probe reads it), else left out (the item says so).
            size_t matrix_size = 0;
            const uint8_t *matrix = av_stream_get_side_data(from, AV_PKT_DATA_DISPLAYMATRIX, &matrix_size);
            if (matrix && matrix_size == 9 * sizeof(int32_t) && tf_display_matrix_is_quarter((const int32_t *) matrix)) {
                uint8_t *copy = av_stream_new_side_data(to, AV_PKT_DATA_DISPLAYMATRIX, matrix_size);
                if (!copy) return AVERROR(ENOMEM);
                memcpy(copy, matrix, matrix_size);
            }
        }
    }
    if (r->rgb24 && !(r->mapped = av_malloc((size_t) r->rgb24->width * (size_t) r->rgb24->height * 3))) return AVERROR(ENOMEM);
    for (unsigned i = 0; i < input->nb_streams; i++)
        input->streams[i]->discard = (int) i == inputs[0] || (int) i == inputs[1] ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    AVDictionary *options = NULL;
    av_dict_set(&options, "movflags", "+faststart", 0);
    result = avformat_write_header(output, &options);
    av_dict_free(&options);
    if (result < 0) return tf_fail(r, result, "cannot write the MP4");
    char codecs[96];
    if (tf_video_codecs(output->streams[0]->codecpar, r->track_count > 1 ? output->streams[1]->codecpar : NULL, codecs, sizeof codecs))
        snprintf(out->codecs, sizeof out->codecs, "%s", codecs);
    r->packet = av_packet_alloc();
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    if (!r->packet || !packet || !frame) {
        av_packet_free(&packet);
        av_frame_free(&frame);
        return AVERROR(ENOMEM);
    }
    // From the start, whatever the poster search read before.
    tf_video_rewind(input, s->video_stream);
    avformat_flush(input);
    while ((result = av_read_frame(input, packet)) >= 0) {
        if (tf_video_check(r->video)) {
            result = AVERROR_EXIT;
            break;
        }
        TFTrack *track = NULL;
        for (int i = 0; i < r->track_count; i++)
            if (r->tracks[i].input == packet->stream_index) track = &r->tracks[i];
        if (track) result = track->encoder ? tf_transcode_packet(r, track, packet, frame) : tf_copy_packet(r, track, packet);
        av_packet_unref(packet);
        if (result < 0) break;
    }
    if (result == AVERROR_EOF) {
        result = 0;
        for (int i = 0; i < r->track_count && result >= 0; i++)
            result = r->tracks[i].encoder ? tf_transcode_packet(r, &r->tracks[i], NULL, frame) : tf_flush_held(r, &r->tracks[i]);
    }
    av_packet_free(&packet);
    av_frame_free(&frame);
    if (tf_video_check(r->video)) {
        out->stopped = tf_video_stopped(r->video);
        return AVERROR_EXIT;
    }
    if (result < 0) return tf_fail(r, result, "cannot read the video");
    if ((result = av_write_trailer(output)) < 0) return tf_fail(r, result, "cannot write the MP4");
    AVStream *written = output->streams[0];
    out->width = written->codecpar->width;
    out->height = written->codecpar->height;
    out->duration = r->video_end > 0 ? (double) r->video_end * av_q2d(written->time_base) : 0;
    out->bytes = avio_size(output->pb);
    return 0;
}

int tf_video_write_rendition(TFVideo *video, int fd, const TFRenditionSettings *settings, TFRenditionResult *result, char *error,
                             size_t error_length) {
    memset(result, 0, sizeof *result);
    error[0] = 0;
    tf_video_rearm(video, settings->timeout_seconds, settings->stop);
    TFRendition r = {.video = video, .settings = settings, .input = tf_video_format(video), .error = error, .error_length = error_length};
    int code = tf_rendition_run(&r, fd, result);
    if (code < 0) {
        result->stopped = tf_video_stopped(video);
        if (error[0] == 0) {
            char text[128];
            tf_av_error_text(code, text, sizeof text);
            snprintf(error, error_length, "%s", text);
        }
    }
    for (int i = 0; i < 2; i++) {
        avcodec_free_context(&r.tracks[i].decoder);
        avcodec_free_context(&r.tracks[i].encoder);
        for (int k = 0; k < r.tracks[i].held_count; k++)
            av_packet_free(&r.tracks[i].held[k]);
    }
    if (r.output) {
        if (r.output->pb) {
            result->write_errno = ((TFTarget *) r.output->pb->opaque)->failure;
            tf_target_close(&r.output->pb);
        }
        avformat_free_context(r.output);
    }
    sws_freeContext(r.scaler);
    sws_freeContext(r.to_rgb);
    sws_freeContext(r.to_yuv);
    av_frame_free(&r.scaled);
    av_frame_free(&r.rgb48);
    av_frame_free(&r.rgb24);
    av_frame_free(&r.sound);
    av_free(r.mapped);
    swr_free(&r.resampler);
    if (r.fifo) av_audio_fifo_free(r.fifo);
    av_packet_free(&r.packet);
    return code < 0 ? code : 0;
}
