import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// What a build and its decode workers say to each other (`DecodeWorkers`, `DecodeWorker`):
/// messages, each after its length (4 bytes, big-endian), over one socket pair, in the fixed
/// layout of `WireWriter`. Facts only: a worker writes its thumbnails, tiles, renditions and motion
/// into its own scratch folder, from which the build copies what it checks into OUT_DIR; no pixel
/// crosses the socket.
///
/// The worker is the same executable started with `argument`; it finds the socket at descriptor
/// `channelFD`, OUT_DIR's `thumbs/` (to read) at `thumbsFD` and its scratch folder (to write) at
/// `scratchFD`. Each job comes with its source file, opened read-only by the build, attached to
/// the job's first bytes (SCM_RIGHTS): the worker has no right to open anything in the source
/// tree, nor to write anything the build publishes.
enum WorkerProtocol {
    static let argument = "__decode-worker"
    static let channelFD: Int32 = 3
    static let thumbsFD: Int32 = 5
    static let scratchFD: Int32 = 6
    /// A longer message to a worker is a build gone wrong (a job with the entry it verifies).
    static let maximumMessageBytes = 16 << 20
    /// The largest file a worker may write (`RLIMIT_FSIZE`): a rendition of hours of video.
    static let maximumOutputBytes = 16 << 30
    /// Threads the workers may start, per job in flight, beyond what their user ran when the build
    /// began (`RLIMIT_NPROC`, which counts a user's threads over all its processes, so the build's
    /// workers together): libvips', the decoders' and x264's take a few dozen.
    static let threadsPerJob = 512
    /// Room for the user's other processes to start threads while the build runs (a desktop
    /// user's browser), which the same count would otherwise take from the workers.
    static let othersThreads = 1024

    /// A longer message from a worker breaks the contract: an item's facts are a few kilobytes,
    /// and the build reads no more of a worker than this a file.
    static let maximumAnswerBytes = 1 << 20

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
        /// Files in flight (`--jobs`): the workers' threads together are bounded by it.
        var jobs = 1
        /// The user (uid, gid) a worker of a build run as root becomes (`nobody`); nil otherwise.
        var user: [UInt32]? = WorkerSandbox.unprivilegedUser().map { [$0.uid, $0.gid] }
        /// The threads the worker's user may have (`RLIMIT_NPROC`); nil: none set (the workers run as
        /// root, whom the kernel does not count).
        var threadLimit: Int?

        /// The thread limit for `jobs` workers running as `user` (nil: the build's own): that user's
        /// threads now, `othersThreads`, and `threadsPerJob` for each job in flight.
        static func threadLimit(user: [UInt32]?, jobs: Int) -> Int? {
            let uid = user?.first ?? getuid()
            guard uid != 0 else { return nil }
            return WorkerSandbox.threads(ofUser: uid) + WorkerProtocol.othersThreads + WorkerProtocol.threadsPerJob * max(1, jobs)
        }
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
        /// The file's SHA-256 as the build read it from the descriptor it hands over: the worker
        /// names and reuses by it and does not hash the file again.
        var sha256: String

        init(_ work: ReusePlan.Work, sha256: String) {
            (rawPath, openPath, stat, self.sha256) = (work.file.rawPath, work.file.openPath, work.file.stat, sha256)
            (previous, previousIdentifier, known, recorded) = (work.previous, work.previousIdentifier, work.placeholder, work.recorded)
        }

        var source: SourceFile {
            var file = SourceFile(path: rawPath)
            file.openPath = openPath
            file.stat = stat
            return file
        }
    }

    /// A job's outcome: the item's facts (a `StateIndex.StoredItem`'s JSON, which the build
    /// checks, completes with the files it names and encodes itself), or the failure.
    struct Done {
        enum Outcome {
            case item(json: [UInt8])
            case failed(Manifest.Failure)
        }
        var outcome: Outcome
        var outputUnwritable: String?
        /// What the build says of the file beside its outcome (a rendition that could not be made).
        var note: String?
        /// Where a Motion Photo's MP4 lies in the file (`ItemProcessor.Timed.motion`).
        var motion: Range<Int>? = nil
    }

    enum ToWorker {
        case setup(Setup)
        case job(Job)
        /// Try what the sandbox denies: read `path` (the tests' view of it).
        case probe(path: String)
    }

    enum FromWorker {
        /// Set up: what of the sandbox and the memory limit holds (nil: it does), or why not.
        case ready(sandbox: WorkerSandbox.Status, memory: String?)
        case done(Done)
        /// A video's rendition starts: its deadline is `--video-timeout` from now, not the decode's.
        case rendering
        /// What `probe` met: nil where the operation succeeded, else its error.
        case probed(read: String?)
    }

    /// Sends all of `bytes` on the socket, `fd` (a job's source file) attached; false when the
    /// other end is gone.
    static func send(_ socket: Int32, _ bytes: [UInt8], attaching fd: Int32) -> Bool {
        let first = DescriptorPassing.send(socket, bytes, attaching: fd)
        return first > 0 && (first == bytes.count || send(socket, Array(bytes[first...])))
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
        /// More than `limit` was announced.
        private(set) var overflowed = false
        /// The longest message taken.
        let limit: Int
        /// Descriptors that came with the bytes, in order (a worker's: each job's source file).
        private(set) var descriptors: [Int32] = []

        init(limit: Int = WorkerProtocol.maximumMessageBytes) { self.limit = limit }

        /// One `read` from `fd` into the inbox: what `read` returned (0 at the end of the stream,
        /// -1 with errno set). With `receivingDescriptors`, what came attached is kept (a plain
        /// read discards it: a worker cannot hand the build a descriptor).
        mutating func fill(from fd: Int32, receivingDescriptors: Bool = false) -> Int {
            let got = chunk.withUnsafeMutableBytes { chunk in
                receivingDescriptors
                    ? DescriptorPassing.receive(fd, into: chunk, descriptors: &descriptors)
                    : Foundation.read(fd, chunk.baseAddress, chunk.count)
            }
            if got > 0 { buffer.append(contentsOf: chunk[0..<got]) }
            return got
        }

        /// The first descriptor received and not yet taken.
        mutating func takeDescriptor() -> Int32? {
            descriptors.isEmpty ? nil : descriptors.removeFirst()
        }

        /// The next whole message's body, or nil until it has arrived.
        mutating func next() -> [UInt8]? {
            guard buffer.count >= 4 else { return nil }
            let length = buffer[0..<4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= limit else {
                overflowed = true
                return nil
            }
            guard buffer.count >= 4 + length else { return nil }
            let body = Array(buffer[4..<(4 + length)])
            buffer.removeFirst(4 + length)
            return body
        }
    }

    /// Reads until one whole message arrived (blocking) and returns it, keeping descriptors that
    /// came with it; nil at the end of the stream or past the inbox's limit.
    static func receive(_ fd: Int32, _ inbox: inout Inbox) -> [UInt8]? {
        while true {
            if let body = inbox.next() { return body }
            if inbox.overflowed { return nil }
            let got = inbox.fill(from: fd, receivingDescriptors: true)
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
        }
    }
}
