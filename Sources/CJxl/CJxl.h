// libjxl's own decoder API, for what libvips 8.14's JPEG XL loader gets wrong: a PQ or HLG
// picture's code values (it converts them through lcms, which cannot). Declared to the shim
// alone (THUMBFRAME_IMAGING), as libvips is.
#ifdef THUMBFRAME_IMAGING
#include <jxl/decode.h>
#endif
