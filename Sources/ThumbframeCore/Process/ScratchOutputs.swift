import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// What a decode worker made for one item, taken into OUT_DIR by the build. A worker writes only
/// into its scratch folder (`thumbs/.tf-tmp-…`, laid out as `thumbs/`), which nothing publishes;
/// the build names every file an item has itself — content addresses from the source's SHA-256
/// it computed and the item's facts, never a path the worker gave — and copies each from the
/// scratch folder (never renames it: a worker may still hold it open), hashing what it copied;
/// a file the worker did not make must already be in OUT_DIR, and is hashed there. The item's
/// paths, sizes and hashes are then the build's.
struct ScratchOutputs {
    /// Why an item's files could not be taken.
    enum Problem: Error {
        /// The worker broke its contract (a file it names it did not make, of no possible size).
        case breach(String)
        /// OUT_DIR did not take a copy.
        case write(String, unwritable: Bool)
    }

    /// The worker's scratch subfolder for this job (nil: it made nothing).
    let scratch: Directory?
    let output: OutputDirectory
    let setup: WorkerProtocol.Setup
    /// The job's source file, open, and its SHA-256 as this process computed it.
    let source: OpenFile
    let sourceSHA256: String
    /// Thumbnails (a pyramid counts one) copied into OUT_DIR: the build's `thumbnailsWritten`.
    var written = 0
    /// Where the worker says a Motion Photo's MP4 lies in the source (`MotionOutput`).
    private(set) var motion: Range<Int>?

    /// The largest thumbnail, sprite sheet or WebVTT file a worker may hand over.
    static let maximumThumbnailBytes = 256 << 20

    init(scratch: Directory?, output: OutputDirectory, setup: WorkerProtocol.Setup, source: OpenFile, sourceSHA256: String) {
        (self.scratch, self.output, self.setup, self.source, self.sourceSHA256) = (scratch, output, setup, source, sourceSHA256)
    }

    /// Every kind of file an item may have, in the order the build takes them.
    static let kinds: [any ItemOutput.Type] = [
        ThumbnailOutput.self, TilesOutput.self, RenditionOutput.self, ScrubOutput.self, MotionOutput.self,
    ]

    /// Names, takes and hashes every file `item` has, kind by kind; `motion` is where the worker
    /// says a Motion Photo's MP4 lies in the source (its files are named from those bytes).
    mutating func settle(_ item: inout StateIndex.StoredItem, motion: Range<Int>?) throws(Problem) {
        self.motion = motion
        for kind in Self.kinds { try kind.take(&item, into: &self) }
    }

    /// The largest rendition or motion MP4 of `item`: a few times its source (an H.264 of an
    /// HEVC video).
    func videoLimit(_ item: StateIndex.StoredItem) -> Int {
        item.file.bytes.multipliedReportingOverflow(by: 4).partialValue + (64 << 20)
    }

    /// The file at `path`: copied from the scratch folder when the worker made it (`copied`),
    /// else found in OUT_DIR; its size and SHA-256 as this process read them.
    func file(_ path: String, limit: Int) throws(Problem) -> (bytes: Int, sha256: String, copied: Bool) {
        guard let name = OutputName(path) else { throw .breach("a file of no content address") }
        if let fanout = try? scratch?.subdirectory(Array(name.fanout.utf8)), let stat = fanout.stat(name.fileBytes) {
            guard stat.isRegularFile, stat.size > 0, stat.size <= limit, let made = try? fanout.openFile(name.fileBytes) else {
                throw .breach("\(path) made of \(stat.size) bytes, or not a file")
            }
            let copied: (Int, String)?
            var failure: Int32 = 0
            do {
                // Hashed as it is copied: the bytes read are the bytes written.
                copied = try output.write(file: path) { target -> (Int, String)? in
                    let sha256 = Digest.sha256(fd: made.fd, size: stat.size) { block, offset in
                        Self.write(block, to: target, at: offset, failure: &failure)
                    }
                    return sha256.map { (stat.size, $0) }
                }
            } catch {
                throw .write("cannot write \(path): \(error.localizedDescription)", unwritable: error.isOutputUnwritable)
            }
            guard let copied else {
                let error = FileSystemError.posix(failure == 0 ? EIO : failure)
                throw .write("cannot write \(path): \(error.localizedDescription)", unwritable: error.isOutputUnwritable)
            }
            return (copied.0, copied.1, true)
        }
        guard let found = output.open(file: path), let stat = found.stat(), stat.isRegularFile, stat.size > 0,
            let sha256 = Digest.sha256(fd: found.fd, size: stat.size)
        else { throw .breach("it names \(path), which it did not make") }
        return (stat.size, sha256, false)
    }

    /// Writes all of `block` at `offset` of `fd`; false (`failure` the errno) when it cannot.
    private static func write(_ block: UnsafeRawBufferPointer, to fd: Int32, at offset: Int, failure: inout Int32) -> Bool {
        var done = 0
        while done < block.count {
            let put = pwrite(fd, block.baseAddress! + done, block.count - done, off_t(offset + done))
            if put < 0, errno == EINTR { continue }
            guard put > 0 else {
                failure = put < 0 ? errno : ENOSPC
                return false
            }
            done += put
        }
        return true
    }
}
