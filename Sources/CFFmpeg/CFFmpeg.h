// FFmpeg's demuxers, decoders and scaler are declared to ThumbframeImaging alone (its C settings
// define THUMBFRAME_IMAGING, as do the C shims' and the tests'), like libvips and libexif: any
// other Swift target that imports this module finds nothing in it.
#ifdef THUMBFRAME_IMAGING
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#endif
