// libvips is declared to ThumbframeImaging alone (its C settings define THUMBFRAME_IMAGING, as do
// the C shims' and the tests'): any other Swift target that imports this module, directly or
// through ThumbframeImaging, finds nothing in it, so the compiler refuses every call it makes.
#ifdef THUMBFRAME_IMAGING
#include <vips/vips.h>
#endif
