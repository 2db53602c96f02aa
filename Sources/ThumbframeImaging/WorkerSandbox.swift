internal import CThumbframeShim
import Foundation

/// What a decode worker gives up before it reads its first file (`tf_sandbox.h`): its life past
/// the build's, privileges, memory past its share, system calls no decoder needs, and every path
/// but the trees it works in. The build's parent process, which owns the state index, journal and
/// manifest, never decodes.
package enum WorkerSandbox {
    /// What the kernel granted: nil where a part holds, else why it does not (it was refused or
    /// the kernel lacks it), for the build to say once.
    package struct Status: Sendable, Equatable {
        package var seccomp: String?
        package var landlock: String?
        package init(seccomp: String? = nil, landlock: String? = nil) {
            self.seccomp = seccomp
            self.landlock = landlock
        }
    }

    /// The worker dies with its parent (`parent`'s pid; gone already, it exits) and can gain no
    /// privilege; nil, or why not.
    package static func prepare(parent: Int32) -> String? {
        let status = tf_sandbox_prepare(parent)
        return status == 0 ? nil : String(cString: strerror(status))
    }

    /// Started as root: gives up every capability and becomes `user` (uid and gid) where one is
    /// given (`tf_sandbox_drop_capabilities`); nil, or why not.
    package static func dropCapabilities(becoming user: (uid: UInt32, gid: UInt32)?) -> String? {
        let status = tf_sandbox_drop_capabilities(user.map { Int($0.uid) } ?? -1, user.map { Int($0.gid) } ?? -1)
        return status == 0 ? nil : String(cString: strerror(status))
    }

    /// The unprivileged user a worker of a build run as root becomes: `nobody`, where the
    /// system has one.
    package static func unprivilegedUser() -> (uid: UInt32, gid: UInt32)? {
        guard geteuid() == 0, let entry = getpwnam("nobody"), entry.pointee.pw_uid != 0 else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// The threads the processes of `uid` (their real user, which `RLIMIT_NPROC` counts by) run
    /// now, from /proc.
    package static func threads(ofUser uid: UInt32) -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        var count = 0
        for entry in entries where entry.first?.isNumber == true {
            guard let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8) else { continue }
            var (real, threads): (UInt32?, Int?) = (nil, nil)
            for line in status.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
                if fields.first == "Uid:", fields.count > 1 { real = UInt32(fields[1]) }
                if fields.first == "Threads:", fields.count > 1 { threads = Int(fields[1]) }
            }
            if real == uid { count += threads ?? 1 }
        }
        return count
    }

    /// Caps the worker's data (heap, anonymous mappings, thread stacks) at `bytes`: an allocation
    /// past it fails, whatever a header said. (RLIMIT_DATA rather than RLIMIT_AS: address space
    /// reserved and never touched, as glibc's arenas are, is not memory.) nil, or why not.
    package static func limitMemory(bytes: Int) -> String? {
        #if canImport(Glibc)
            limit(__rlimit_resource_t(RLIMIT_DATA.rawValue), to: bytes)
        #else
            limit(RLIMIT_DATA, to: bytes)
        #endif
    }

    /// Caps what one file the worker writes may hold (`RLIMIT_FSIZE`: a write past it fails, with
    /// SIGXFSZ, which kills the worker) and the threads its user may have (`RLIMIT_NPROC`, which
    /// counts them over all that user's processes: the build's workers together). nil, or why not.
    package static func limitOutput(bytes: Int, threads: Int?) -> String? {
        #if canImport(Glibc)
            let (size, count) = (__rlimit_resource_t(RLIMIT_FSIZE.rawValue), __rlimit_resource_t(__RLIMIT_NPROC.rawValue))
        #else
            let (size, count) = (RLIMIT_FSIZE, RLIMIT_NPROC)
        #endif
        if let why = limit(size, to: bytes) { return why }
        return threads.flatMap { limit(count, to: $0) }
    }

    #if canImport(Glibc)
        private static func limit(_ resource: __rlimit_resource_t, to value: Int) -> String? {
            var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
            return setrlimit(resource, &limit) == 0 ? nil : String(cString: strerror(errno))
        }
    #else
        private static func limit(_ resource: Int32, to value: Int) -> String? {
            var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
            return setrlimit(resource, &limit) == 0 ? nil : String(cString: strerror(errno))
        }
    #endif

    /// Applies the system-call filter, then limits files to reading beneath `read` and reading and
    /// writing beneath `write` (open directory descriptors).
    package static func apply(read: [Int32], write: [Int32]) -> Status {
        var status = Status()
        let seccomp = tf_sandbox_seccomp()
        if seccomp != 0 { status.seccomp = String(cString: strerror(seccomp)) }
        var abi: Int32 = 0
        let landlock = read.withUnsafeBufferPointer { reads in
            write.withUnsafeBufferPointer { writes in
                tf_sandbox_landlock(reads.baseAddress, Int32(reads.count), writes.baseAddress, Int32(writes.count), &abi)
            }
        }
        if landlock != 0 { status.landlock = String(cString: strerror(landlock)) }
        return status
    }
}

/// Descriptors passed over a Unix socket (SCM_RIGHTS): the build hands each job's source file,
/// opened read-only, to its worker, which needs no right to open it.
package enum DescriptorPassing {
    /// One `sendmsg` of (the start of) `bytes` with `fd` attached: how many bytes went, or -1
    /// with errno set (EINTR retried). The rest goes as any other bytes do (`WorkerProtocol.send`).
    package static func send(_ socket: Int32, _ bytes: [UInt8], attaching fd: Int32) -> Int {
        while true {
            let sent = bytes.withUnsafeBytes { Int(tf_send_descriptor(socket, $0.baseAddress, $0.count, fd)) }
            if sent < 0, errno == EINTR { continue }
            return sent
        }
    }

    /// One `recvmsg` into `buffer`; descriptors that came with the bytes are appended to
    /// `descriptors`. What `recvmsg` returned (0 at the end of the stream, -1 with errno set).
    package static func receive(_ socket: Int32, into buffer: UnsafeMutableRawBufferPointer, descriptors: inout [Int32]) -> Int {
        var fds = [Int32](repeating: -1, count: 8)
        var received: Int32 = 0
        let got = fds.withUnsafeMutableBufferPointer { fds in
            tf_receive_with_descriptors(socket, buffer.baseAddress, buffer.count, fds.baseAddress, Int32(fds.count), &received)
        }
        descriptors.append(contentsOf: fds.prefix(Int(received)))
        return got
    }
}
