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

    /// Caps the worker's data (heap, anonymous mappings, thread stacks) at `bytes`: an allocation
    /// past it fails, whatever a header said. (RLIMIT_DATA rather than RLIMIT_AS: address space
    /// reserved and never touched, as glibc's arenas are, is not memory.) nil, or why not.
    package static func limitMemory(bytes: Int) -> String? {
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_DATA.rawValue)
        #else
            let resource = RLIMIT_DATA
        #endif
        return setrlimit(resource, &limit) == 0 ? nil : String(cString: strerror(errno))
    }

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
