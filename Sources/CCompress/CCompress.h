// zlib (gzip) and Brotli, for the pre-compressed siblings of the manifest and its pages
// (`manifest.json.gz`, `.br`) that static servers send as they are.
#include <zlib.h>
#include <brotli/decode.h>
#include <brotli/encode.h>
