import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// Each message as `WireWriter` lays it out: a tag byte, then its fields in the order written
/// here, read back in the same order.
extension WorkerProtocol.ToWorker {
    /// The message, framed.
    var wire: [UInt8] {
        switch self {
        case .setup(let setup):
            var writer = WireWriter(tag: 0)
            writer.json(setup)
            return writer.framed()
        case .job(let job):
            var writer = WireWriter(tag: 1)
            job.write(to: &writer)
            return writer.framed()
        case .probe(let path):
            var writer = WireWriter(tag: 2)
            writer.string(path)
            return writer.framed()
        }
    }

    init(wire body: [UInt8]) throws(WireReader.Malformed) {
        var reader = WireReader(body)
        switch try reader.byte() {
        case 0: self = .setup(try reader.json(WorkerProtocol.Setup.self))
        case 1: self = .job(try WorkerProtocol.Job(from: &reader))
        case 2: self = .probe(path: try reader.string())
        default: throw WireReader.Malformed()
        }
        try reader.finish()
    }
}

extension WorkerProtocol.FromWorker {
    /// The message, framed.
    var wire: [UInt8] {
        switch self {
        case .ready(let sandbox, let memory):
            var writer = WireWriter(tag: 0)
            for part in [sandbox.seccomp, sandbox.landlock, memory] { writer.optional(part) { $0.string($1) } }
            return writer.framed()
        case .done(let done):
            var writer = WireWriter(tag: 1)
            done.write(to: &writer)
            return writer.framed()
        case .probed(let read):
            var writer = WireWriter(tag: 2)
            writer.optional(read) { $0.string($1) }
            return writer.framed()
        case .rendering:
            return WireWriter(tag: 3).framed()
        }
    }

    init(wire body: [UInt8]) throws(WireReader.Malformed) {
        var reader = WireReader(body)
        func text() throws(WireReader.Malformed) -> String? {
            try reader.optional { (reader) throws(WireReader.Malformed) in try reader.string() }
        }
        switch try reader.byte() {
        case 0:
            let sandbox = WorkerSandbox.Status(seccomp: try text(), landlock: try text())
            self = .ready(sandbox: sandbox, memory: try text())
        case 1: self = .done(try WorkerProtocol.Done(from: &reader))
        case 2: self = .probed(read: try text())
        case 3: self = .rendering
        default: throw WireReader.Malformed()
        }
        try reader.finish()
    }
}

extension WorkerProtocol.Job {
    fileprivate func write(to writer: inout WireWriter) {
        writer.bytes(rawPath)
        writer.bytes(openPath)
        for field in [
            Int(bitPattern: UInt(stat.identity.device)), Int(bitPattern: UInt(stat.identity.inode)), Int(stat.mode), stat.size,
            stat.links, stat.modifiedSeconds, stat.modifiedNanoseconds,
        ] {
            writer.int(field)
        }
        writer.string(sha256)
        writer.optional(previousIdentifier) { $0.string($1) }
        writer.int(recorded.count)
        for (path, bytes) in recorded {
            writer.string(path)
            writer.int(bytes)
        }
        // Only for files whose row the index had: JSON is cheap enough there.
        writer.optional(previous) { $0.json($1) }
        writer.optional(known) { $0.json($1) }
    }

    fileprivate init(from reader: inout WireReader) throws(WireReader.Malformed) {
        rawPath = try reader.bytes()
        openPath = try reader.bytes()
        let identity = FileIdentity(device: UInt64(UInt(bitPattern: try reader.int())), inode: UInt64(UInt(bitPattern: try reader.int())))
        guard let mode = UInt32(exactly: try reader.int()) else { throw WireReader.Malformed() }
        stat = FileStat(
            identity: identity, mode: mode, size: try reader.int(), links: try reader.int(), modifiedSeconds: try reader.int(),
            modifiedNanoseconds: try reader.int())
        sha256 = try reader.string()
        guard Manifest.isSHA256(sha256) else { throw WireReader.Malformed() }
        previousIdentifier = try reader.optional { (reader) throws(WireReader.Malformed) in try reader.string() }
        let count = try reader.int()
        guard count >= 0, count <= WorkerProtocol.maximumMessageBytes / 16 else { throw WireReader.Malformed() }
        recorded = [:]
        for _ in 0..<count { recorded[try reader.string()] = try reader.int() }
        previous = try reader.optional { (reader) throws(WireReader.Malformed) in try reader.json(Manifest.Item.self) }
        known = try reader.optional { (reader) throws(WireReader.Malformed) in try reader.json(ReusePlan.KnownPlaceholder.self) }
    }
}

extension WorkerProtocol.Done {
    fileprivate func write(to writer: inout WireWriter) {
        writer.optional(outputUnwritable) { $0.string($1) }
        writer.optional(note) { $0.string($1) }
        writer.optional(motion) {
            $0.int($1.lowerBound)
            $0.int($1.count)
        }
        switch outcome {
        case .item(let json):
            writer.bool(true)
            writer.bytes(json)
        case .failed(let failure):
            writer.bool(false)
            writer.json(failure)
        }
    }

    fileprivate init(from reader: inout WireReader) throws(WireReader.Malformed) {
        outputUnwritable = try reader.optional { (reader) throws(WireReader.Malformed) in try reader.string() }
        note = try reader.optional { (reader) throws(WireReader.Malformed) in try reader.string() }
        motion = try reader.optional { (reader) throws(WireReader.Malformed) -> Range<Int> in
            let (offset, count) = (try reader.int(), try reader.int())
            guard offset >= 0, count > 0, offset <= Int.max - count else { throw WireReader.Malformed() }
            return offset..<(offset + count)
        }
        guard try reader.bool() else {
            outcome = .failed(try reader.json(Manifest.Failure.self))
            return
        }
        outcome = .item(json: try reader.bytes())
    }
}
