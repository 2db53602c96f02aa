// libheif's own API, for what libvips 8.14's HEIF loader does not give: a picture's nclx colour
// (PQ, HLG), its decode at its own bit depth, and its auxiliary images (a gain map). Declared to
// ThumbframeImaging and the shim alone (THUMBFRAME_IMAGING), as libvips is.
#ifdef THUMBFRAME_IMAGING
#include <libheif/heif.h>
#endif
