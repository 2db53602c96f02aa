// LibRaw is declared to ThumbframeImaging alone (its C settings define THUMBFRAME_IMAGING, as do
// the C shims' and the tests'), like libvips, libexif and FFmpeg.
#ifdef THUMBFRAME_IMAGING
#include <libraw/libraw.h>
#endif
