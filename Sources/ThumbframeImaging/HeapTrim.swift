import CThumbframeShim

/// Hands the heap's free pages back to the system between a build's stages. glibc keeps what a
/// stage freed (the walk's file list, the plan's rows, a decode's buffers) in its arenas;
/// without this the next stage's peak is counted on top of the last one's in the resident size.
package enum HeapTrim {
    package static func now() {
        tf_trim_heap()
    }
}
