#include <libheif/heif.h>
#include "tf_test_shim.h"

VipsImage *tf_image_new_from_file(const char *path) { return vips_image_new_from_file(path, NULL); }

int tf_write_to_file(VipsImage *in, const char *path_with_options) { return vips_image_write_to_file(in, path_with_options, NULL); }

int tf_save_file(VipsImage *in, const char *path, TFFormat format, int quality) {
    switch (format) {
    case TF_FORMAT_JPEG: return vips_jpegsave(in, path, "Q", quality, NULL);
    case TF_FORMAT_WEBP: return vips_webpsave(in, path, "Q", quality, NULL);
    case TF_FORMAT_AVIF: return vips_heifsave(in, path, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, NULL);
    case TF_FORMAT_PNG: return vips_pngsave(in, path, NULL);
    }
    vips_error("thumbframe", "unknown output format %d", (int) format);
    return -1;
}

int tf_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile, int embedded, int depth) {
    return vips_icc_transform(in, out, output_profile, "input_profile", input_profile, "embedded", embedded ? TRUE : FALSE, "intent",
                              VIPS_INTENT_RELATIVE, "depth", depth, NULL);
}

int tf_delta_e00(VipsImage *a, VipsImage *b, VipsImage **out) {
    VipsImage *la = NULL, *lb = NULL;
    int result = -1;
    if (!vips_colourspace(a, &la, VIPS_INTERPRETATION_LAB, NULL) && !vips_colourspace(b, &lb, VIPS_INTERPRETATION_LAB, NULL))
        result = vips_dE00(la, lb, out, NULL);
    if (la) g_object_unref(la);
    if (lb) g_object_unref(lb);
    return result;
}

int tf_cast_double(VipsImage *in, VipsImage **out) { return vips_cast(in, out, VIPS_FORMAT_DOUBLE, NULL); }

int tf_vips_resize(VipsImage *in, VipsImage **out, double scale, double gap) {
    return vips_resize(in, out, scale, "kernel", VIPS_KERNEL_LANCZOS3, "gap", gap, NULL);
}

int tf_interpreted_as(VipsImage *in, VipsImage **out, VipsInterpretation interpretation) {
    return vips_copy(in, out, "interpretation", interpretation, NULL);
}

int tf_grey_to_srgb(VipsImage *in, VipsImage **out) { return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL); }

/* Device value -> the CIELAB of an sRGB colour: the RGB device is sRGB with red and blue
 * swapped, the CMYK device is naive (R = (1 - C)(1 - K), ...). */
static cmsHTRANSFORM tf_srgb_to_lab;

static int tf_lut_sampler(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    int channels = *(const int *) cargo;
    cmsUInt16Number rgb[3];
    if (channels == 3) {
        rgb[0] = in[2];
        rgb[1] = in[1];
        rgb[2] = in[0];
    } else
        for (int i = 0; i < 3; i++)
            rgb[i] = (cmsUInt16Number) ((65535.0 - in[i]) * (65535.0 - in[3]) / 65535.0 + 0.5);
    cmsDoTransform(tf_srgb_to_lab, rgb, out, 1);
    return 1;
}

int tf_test_lut_profile(int cmyk, void **data, size_t *length) {
    int channels = cmyk ? 4 : 3;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile(), lab = cmsCreateLab4Profile(NULL);
    tf_srgb_to_lab = cmsCreateTransform(srgb, TYPE_RGB_16, lab, TYPE_Lab_16, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
    cmsHPROFILE profile = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(profile, 4.3);
    cmsSetDeviceClass(profile, cmyk ? cmsSigOutputClass : cmsSigInputClass);
    cmsSetColorSpace(profile, cmyk ? cmsSigCmykData : cmsSigRgbData);
    cmsSetPCS(profile, cmsSigLabData);
    cmsPipeline *lut = cmsPipelineAlloc(NULL, channels, 3);
    cmsStage *table = cmsStageAllocCLut16bit(NULL, cmyk ? 9 : 17, channels, 3, NULL);
    cmsStageSampleCLut16bit(table, tf_lut_sampler, &channels, 0);
    cmsPipelineInsertStage(lut, cmsAT_END, cmsStageAllocToneCurves(NULL, channels, NULL));
    cmsPipelineInsertStage(lut, cmsAT_END, table);
    cmsPipelineInsertStage(lut, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));
    cmsWriteTag(profile, cmsSigAToB0Tag, lut);
    cmsWriteTag(profile, cmsSigMediaWhitePointTag, cmsD50_XYZ());
    cmsMLU *description = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(description, "en", "US", "thumbframe test: A2B0 only");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, description);
    cmsUInt32Number size = 0;
    int result = -1;
    if (cmsSaveProfileToMem(profile, NULL, &size) && (*data = g_malloc(size)) && cmsSaveProfileToMem(profile, *data, &size)) {
        *length = size;
        result = 0;
    }
    cmsMLUfree(description);
    cmsPipelineFree(lut);
    cmsCloseProfile(profile);
    cmsDeleteTransform(tf_srgb_to_lab);
    cmsCloseProfile(srgb);
    cmsCloseProfile(lab);
    return result;
}

int tf_test_device_image(VipsImage *srgb, int cmyk, const void *profile, size_t length, VipsImage **out) {
    VipsImage *t[4] = {NULL};
    int result = -1;
    if (cmyk) {
        if (vips_invert(srgb, &t[0], NULL) || vips_black(&t[1], srgb->Xsize, srgb->Ysize, NULL) ||
            vips_cast(t[1], &t[2], VIPS_FORMAT_UCHAR, NULL) || vips_bandjoin2(t[0], t[2], &t[3], NULL) ||
            vips_copy(t[3], out, "interpretation", VIPS_INTERPRETATION_CMYK, NULL))
            goto done;
    } else {
        if (vips_extract_band(srgb, &t[0], 2, NULL) || vips_extract_band(srgb, &t[1], 1, NULL) || vips_extract_band(srgb, &t[2], 0, NULL))
            goto done;
        VipsImage *bands[3] = {t[0], t[1], t[2]};
        if (vips_bandjoin(bands, &t[3], 3, NULL) || vips_copy(t[3], out, "interpretation", VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    }
    vips_image_set_blob_copy(*out, VIPS_META_ICC_NAME, profile, length);
    result = 0;
done:
    for (int i = 0; i < 4; i++)
        if (t[i]) g_object_unref(t[i]);
    return result;
}

int tf_test_write_heif_hdr(const char *png16, const char *path, int transfer, int av1) {
    VipsImage *image = vips_image_new_from_file(png16, NULL);
    if (!image) return -1;
    int result = -1;
    size_t size = 0;
    uint16_t *pixels = NULL;
    struct heif_context *context = heif_context_alloc();
    struct heif_image *picture = NULL;
    struct heif_encoder *encoder = NULL;
    struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
    int w = image->Xsize, h = image->Ysize;
    if (image->Bands != 3 || image->BandFmt != VIPS_FORMAT_USHORT || !(pixels = vips_image_write_to_memory(image, &size))) goto done;
    if (heif_image_create(w, h, heif_colorspace_RGB, heif_chroma_interleaved_RRGGBB_LE, &picture).code ||
        heif_image_add_plane(picture, heif_channel_interleaved, w, h, 10).code)
        goto done;
    int stride = 0;
    uint8_t *plane = heif_image_get_plane(picture, heif_channel_interleaved, &stride);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w * 3; x++) {
            unsigned value = (pixels[(size_t) y * w * 3 + x] * 1023u + 32767) / 65535;
            plane[(size_t) y * stride + 2 * x] = value & 0xFF;
            plane[(size_t) y * stride + 2 * x + 1] = value >> 8;
        }
    nclx->color_primaries = heif_color_primaries_ITU_R_BT_2020_2_and_2100_0;
    nclx->transfer_characteristics = (enum heif_transfer_characteristics) transfer;
    nclx->matrix_coefficients = heif_matrix_coefficients_ITU_R_BT_2020_2_non_constant_luminance;
    nclx->full_range_flag = 1;
    if (heif_image_set_nclx_color_profile(picture, nclx).code) goto done;
    if (heif_context_get_encoder_for_format(context, av1 ? heif_compression_AV1 : heif_compression_HEVC, &encoder).code) goto done;
    heif_encoder_set_lossy_quality(encoder, 95);
    struct heif_encoding_options *options = heif_encoding_options_alloc();
    options->output_nclx_profile = nclx;
    options->macOS_compatibility_workaround_no_nclx_profile = 0;
    int failed = heif_context_encode_image(context, picture, encoder, options, NULL).code;
    heif_encoding_options_free(options);
    if (failed || heif_context_write_to_file(context, path).code) goto done;
    result = 0;
done:
    if (encoder) heif_encoder_release(encoder);
    if (picture) heif_image_release(picture);
    heif_nclx_color_profile_free(nclx);
    heif_context_free(context);
    g_free(pixels);
    g_object_unref(image);
    return result;
}
