import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// What a build and its decode workers say to each other (`DecodeWorkers`, `DecodeWorker`):
/// messages, each after its length (4 bytes, big-endian), over one socket pair, in the fixed
/// layout of `WireWriter`. Facts only: a worker writes its thumbnails, posters, tiles and motion
/// into OUT_DIR itself (their names into OUT_DIR's journal first), and no pixel crosses the socket.
///
/// The worker is the same executable started with `argument`; it finds the socket at descriptor
/// `channelFD`, the source directory at `sourceFD` and OUT_DIR at `outputFD`.
enum WorkerProtocol {
    static let argument = "__decode-worker"
    static let channelFD: Int32 = 3
    static let sourceFD: Int32 = 4
    static let outputFD: Int32 = 5
    /// A longer message is a worker gone wrong (an item's facts are a few kilobytes).
    static let maximumMessageBytes = 16 << 20

    /// Sent once, before any job.
    struct Setup: Codable {
        var recipes: [ThumbnailRecipe]
        var settings: Manifest.Settings?
        var limits: ResourceLimits
        /// `--force`: thumbnails are written again even where their content address exists.
        var overwrite: Bool
        var threadsPerImage: Int
        var sourcePath: String
        var outputPath: String
        /// The worker's data limit in bytes (`RLIMIT_DATA`).
        var memoryLimit: Int
        /// Apply seccomp and Landlock (always, but for the tests that show what they deny).
        var sandbox = true
        /// Which videos get renditions, and how they are made.
        var renditions = RenditionSettings()
    }

    /// One file to make into an item (`ReusePlan.Work`).
    struct Job {
        var rawPath: [UInt8]
        var openPath: [UInt8]
        var stat: FileStat
        var previous: Manifest.Item?
        var previousIdentifier: String?
        var known: ReusePlan.KnownPlaceholder?
        var recorded: [String: Int]

        init(_ work: ReusePlan.Work) {
            (rawPath, openPath, stat) = (work.file.rawPath, work.file.openPath, work.file.stat)
            (previous, previousIdentifier, known, recorded) = (work.previous, work.previousIdentifier, work.placeholder, work.recorded)
        }

        var source: SourceFile {
            var file = SourceFile(path: rawPath)
            file.openPath = openPath
            file.stat = stat
            return file
        }
    }

    /// A job's outcome: the item as the build's state index stores it, or the failure.
    struct Done {
        enum Outcome {
            case item(StateIndex.EncodedItem, thumbnailsWritten: Int)
            case failed(Manifest.Failure)
        }
        var outcome: Outcome
        var outputUnwritable: String?
        /// What the build says of the file beside its outcome (a rendition that could not be made).
        var note: String?
    }

    enum ToWorker {
        case setup(Setup)
        case job(Job)
        /// Try what the sandbox denies: open a socket, and read `path` (the tests' view of it).
        case probe(path: String)
    }

    enum FromWorker {
        /// Set up: what of the sandbox and the memory limit holds (nil: it does), or why not.
        case ready(sandbox: WorkerSandbox.Status, memory: String?)
        case done(Done)
        /// A video's rendition starts: its deadline is `--video-timeout` from now, not the decode's.
        case rendering
        /// What `probe` met: nil where the operation succeeded, else its error.
        case probed(socket: String?, read: String?)
    }

    /// Sends all of `bytes` on the socket; false when the other end is gone.
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Messages as bytes arrive, in order.
    struct Inbox {
        private var buffer: [UInt8] = []
        /// Where reads land, kept from one to the next (a small file's job and outcome are a
        /// read each).
        private var chunk = [UInt8](repeating: 0, count: 64 << 10)
        /// More than `maximumMessageBytes` was announced.
        private(set) var overflowed = false

        /// One `read` from `fd` into the inbox: what `read` returned (0 at the end of the stream,
        /// -1 with errno set).
        mutating func fill(from fd: Int32) -> Int {
            let got = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if got > 0 { buffer.append(contentsOf: chunk[0..<got]) }
            return got
        }

        /// The next whole message's body, or nil until it has arrived.
        mutating func next() -> [UInt8]? {
            guard buffer.count >= 4 else { return nil }
            let length = buffer[0..<4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= WorkerProtocol.maximumMessageBytes else {
                overflowed = true
                return nil
            }
            guard buffer.count >= 4 + length else { return nil }
            let body = Array(buffer[4..<(4 + length)])
            buffer.removeFirst(4 + length)
            return body
        }
    }

    /// Reads until one whole message arrived (blocking) and returns it; nil at the end of the
    /// stream or past `maximumMessageBytes`.
    static func receive(_ fd: Int32, _ inbox: inout Inbox) -> [UInt8]? {
        while true {
            if let body = inbox.next() { return body }
            if inbox.overflowed { return nil }
            let got = inbox.fill(from: fd)
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
        }
    }
}
