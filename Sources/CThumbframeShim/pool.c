#define _GNU_SOURCE /* mremap */
#include "tf_shim.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* Every large pixel buffer a job makes (a JPEG's decode, the resize's passes) was a fresh
 * mapping: the kernel zeroed each page before the decoder overwrote it, 5 % of a cold build's
 * CPU in `perf`. A worker decodes one file after another at similar sizes, so the pool keeps what
 * a job let go — at most TF_POOL_BLOCKS blocks and TF_POOL_BYTES in all, the oldest given back
 * first — for the next buffers. An allocation the worker's memory limit refuses gives every kept
 * block back and tries once more, so what is kept never fails a file. */

#define TF_POOL_SMALLEST ((size_t) 1 << 20)
#define TF_POOL_GRAIN ((size_t) 2 << 20) /* a huge page: blocks are whole ones */
#define TF_POOL_BLOCKS 8
#define TF_POOL_BYTES ((size_t) 96 << 20)

typedef struct {
    void *base;
    size_t capacity;
} TFBlock;

static GMutex tf_pool_lock;
static TFBlock tf_pool_free[TF_POOL_BLOCKS]; /* oldest first */
static int tf_pool_count;
static size_t tf_pool_bytes;

/* Removes kept block i (the lock held). */
static TFBlock tf_pool_remove(int i) {
    TFBlock block = tf_pool_free[i];
    memmove(&tf_pool_free[i], &tf_pool_free[i + 1], sizeof(TFBlock) * (size_t) (tf_pool_count - i - 1));
    tf_pool_count--;
    tf_pool_bytes -= block.capacity;
    return block;
}

static void tf_pool_drop_all(void) {
    g_mutex_lock(&tf_pool_lock);
    while (tf_pool_count > 0) {
        TFBlock block = tf_pool_remove(0);
        munmap(block.base, block.capacity);
    }
    g_mutex_unlock(&tf_pool_lock);
}

/* Maps a fresh block of `capacity` bytes, giving every kept block back first if the worker's
 * memory limit refuses it. */
static void *tf_pool_map(size_t capacity) {
    for (int attempt = 0; attempt < 2; attempt++) {
        void *base = mmap(NULL, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
            madvise(base, capacity, MADV_HUGEPAGE);
#endif
            return base;
        }
        if (errno != ENOMEM) break;
        tf_pool_drop_all();
    }
    return NULL;
}

static int tf_pool_take(size_t bytes, TFBlock *out) {
    const size_t capacity = (bytes + TF_POOL_GRAIN - 1) & ~(TF_POOL_GRAIN - 1);
    g_mutex_lock(&tf_pool_lock);
    /* The smallest kept block that holds it, or else the largest, resized to it unless it is
     * at most half as large again: a shrink hands the tail back, a growth (moved if need be)
     * zeroes only its new pages. Keeping every block whole would hold the largest job's
     * buffers beside the next one's (peak RSS 220 against 160 MiB on the bench's JPEGs);
     * resizing each to each buffer zeroes as many pages as the pool saves. */
    int best = -1;
    for (int i = 0; i < tf_pool_count; i++) {
        const size_t have = tf_pool_free[i].capacity;
        if (best < 0) {
            best = i;
            continue;
        }
        const size_t chosen = tf_pool_free[best].capacity;
        if (chosen >= capacity ? have >= capacity && have < chosen : have > chosen) best = i;
    }
    if (best < 0) {
        g_mutex_unlock(&tf_pool_lock);
        if (!(out->base = tf_pool_map(capacity))) return -1;
        out->capacity = capacity;
        return 0;
    }
    TFBlock block = tf_pool_remove(best);
    g_mutex_unlock(&tf_pool_lock);
    if (block.capacity < capacity || block.capacity > capacity + capacity / 2 + TF_POOL_GRAIN) {
        void *moved = mremap(block.base, block.capacity, capacity, MREMAP_MAYMOVE);
        if (moved == MAP_FAILED) {
            munmap(block.base, block.capacity);
            if (!(out->base = tf_pool_map(capacity))) return -1;
            out->capacity = capacity;
            return 0;
        }
        block.base = moved;
        block.capacity = capacity;
    }
    *out = block;
    return 0;
}

static void tf_pool_give(TFBlock block) {
    g_mutex_lock(&tf_pool_lock);
    if (block.capacity > TF_POOL_BYTES) {
        g_mutex_unlock(&tf_pool_lock);
        munmap(block.base, block.capacity);
        return;
    }
    TFBlock dropped[TF_POOL_BLOCKS];
    int drops = 0;
    while (tf_pool_count == TF_POOL_BLOCKS || tf_pool_bytes + block.capacity > TF_POOL_BYTES)
        dropped[drops++] = tf_pool_remove(0);
    tf_pool_free[tf_pool_count++] = block;
    tf_pool_bytes += block.capacity;
    g_mutex_unlock(&tf_pool_lock);
    for (int i = 0; i < drops; i++)
        munmap(dropped[i].base, dropped[i].capacity);
}

static void tf_pool_closed(VipsImage *image, gpointer data) {
    (void) image;
    TFBlock *block = data;
    tf_pool_give(*block);
    g_free(block);
}

VipsImage *tf_pool_image(int width, int height, int bands, VipsBandFormat format) {
    const size_t bytes = (size_t) width * (size_t) height * (size_t) bands * vips_format_sizeof(format);
    if (width < 1 || height < 1 || bytes < TF_POOL_SMALLEST) {
        VipsImage *image = vips_image_new_memory();
        vips_image_init_fields(image, width, height, bands, format, VIPS_CODING_NONE, VIPS_INTERPRETATION_MULTIBAND, 1.0, 1.0);
        if (vips_image_write_prepare(image)) {
            g_object_unref(image);
            return NULL;
        }
        return image;
    }
    TFBlock block;
    if (tf_pool_take(bytes, &block)) {
        vips_error("thumbframe", "out of memory for %dx%d pixels", width, height);
        return NULL;
    }
    VipsImage *image = vips_image_new_from_memory(block.base, bytes, width, height, bands, format);
    if (!image) {
        tf_pool_give(block);
        return NULL;
    }
    TFBlock *kept = g_new(TFBlock, 1);
    *kept = block;
    g_signal_connect(image, "postclose", G_CALLBACK(tf_pool_closed), kept);
    return image;
}

void tf_pool_kept(int *blocks, size_t *bytes) {
    g_mutex_lock(&tf_pool_lock);
    *blocks = tf_pool_count;
    *bytes = tf_pool_bytes;
    g_mutex_unlock(&tf_pool_lock);
}
