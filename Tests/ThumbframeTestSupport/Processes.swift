import Foundation

/// Runs programs for tests: the thumbframe executable, and oracles such as exiftool.
public enum Processes {
    /// What a finished program left behind.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        /// The closing `summary` event of a `--log-format json` build or merge, as an object
        /// (empty when there is none).
        public var summary: [String: Any] {
            guard let line = stderr.split(separator: "\n").last(where: { $0.contains("\"summary\"") }),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { return [:] }
            return object
        }
    }

    /// Runs `executable` to the end and captures both outputs, on a thread of its own: the test
    /// awaits it without holding a thread of Swift's cooperative pool (two threads on a 2-core
    /// machine, which blocked waits would stall for every other test).
    public static func run(_ executable: String, _ arguments: [String]) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try runBlocking(executable, arguments) }) }
            thread.start()
        }
    }

    /// Polls `condition` every `microseconds` on a thread of its own until it holds or `attempts`
    /// run out, then runs `action` on that thread at once; true when the condition held. A
    /// readiness wait (a journal line, a file) whose action (a kill) must neither wait for a
    /// thread of the cooperative pool, which the rest of the suite may keep busy, nor hold one.
    public static func poll(
        every microseconds: UInt32, attempts: Int, until condition: @escaping @Sendable () -> Bool,
        then action: @escaping @Sendable () -> Void = {}
    ) async -> Bool {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                // (Until it holds: a `for … where` would go on asking to the last attempt.)
                var (held, tries) = (condition(), 0)
                while !held && tries < attempts {
                    usleep(microseconds)
                    (held, tries) = (condition(), tries + 1)
                }
                action()
                continuation.resume(returning: held)
            }
            thread.start()
        }
    }

    /// `run`, blocking the calling thread: only where nothing can await (a test trait's condition,
    /// evaluated once before the tests run; a `defer`'s cleanup). stderr is drained on another
    /// thread while stdout is read, so neither pipe can fill up and block the child.
    public static func runBlocking(_ executable: String, _ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let errors = DataBox()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errors.data = err.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: errors.data, as: UTF8.self))
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something accepts connections on 127.0.0.1:`port` (a server starting), up to
    /// `seconds`, and while `alive` says the server is still there: whether it does.
    public static func waitForPort(_ port: Int, seconds: Double = 30, while alive: () -> Bool = { true }) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, alive() {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return true }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        return false
    }

    /// The path of a tool in the usual places, or nil.
    public static func tool(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/usr/local/bin/\(name)", "/opt/homebrew/bin/\(name)"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// Carries stderr's bytes from the draining thread; written before the semaphore is signalled
/// and read after it is waited on, so the accesses never overlap.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}
