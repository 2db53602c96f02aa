#include "tf_test_shim.h"

VipsImage *tf_image_new_from_file(const char *path) {
    return vips_image_new_from_file(path, NULL);
}

int tf_write_to_file(VipsImage *in, const char *path_with_options) {
    return vips_image_write_to_file(in, path_with_options, NULL);
}

int tf_save_file(VipsImage *in, const char *path, TFFormat format, int quality) {
    switch (format) {
    case TF_FORMAT_JPEG:
        return vips_jpegsave(in, path, "Q", quality, NULL);
    case TF_FORMAT_WEBP:
        return vips_webpsave(in, path, "Q", quality, NULL);
    case TF_FORMAT_AVIF:
        return vips_heifsave(in, path, "Q", quality,
            "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1, NULL);
    case TF_FORMAT_PNG:
        return vips_pngsave(in, path, NULL);
    }
    vips_error("thumbframe", "unknown output format %d", (int) format);
    return -1;
}

int tf_icc_transform(VipsImage *in, VipsImage **out, const char *output_profile, const char *input_profile,
    int embedded, int depth) {
    return vips_icc_transform(in, out, output_profile,
        "input_profile", input_profile,
        "embedded", embedded ? TRUE : FALSE,
        "intent", VIPS_INTENT_RELATIVE,
        "depth", depth,
        NULL);
}

int tf_delta_e00(VipsImage *a, VipsImage *b, VipsImage **out) {
    VipsImage *la = NULL, *lb = NULL;
    int result = -1;
    if (!vips_colourspace(a, &la, VIPS_INTERPRETATION_LAB, NULL) &&
        !vips_colourspace(b, &lb, VIPS_INTERPRETATION_LAB, NULL))
        result = vips_dE00(la, lb, out, NULL);
    if (la)
        g_object_unref(la);
    if (lb)
        g_object_unref(lb);
    return result;
}

int tf_cast_double(VipsImage *in, VipsImage **out) {
    return vips_cast(in, out, VIPS_FORMAT_DOUBLE, NULL);
}
