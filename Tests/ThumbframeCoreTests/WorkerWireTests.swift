import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest

@testable import ThumbframeCore

/// The messages between a build and its decode workers, in their binary layout: what one end
/// writes the other reads back, and bytes that are not a message (a worker gone wrong) are
/// refused, never trusted or trapped on.
@Suite("Worker messages")
struct WorkerWireTests {
    static let job: WorkerProtocol.Job = {
        var file = SourceFile(
            directory: [Array("2019".utf8), [0x66, 0xFF, 0x6F]], name: Array("IMG_1.jpg".utf8),
            stat: FileStat(
                identity: FileIdentity(device: UInt64.max - 7, inode: 1 << 63), mode: 0o100644, size: 2_817_364, links: 2,
                modifiedSeconds: -86_400, modifiedNanoseconds: 999_999_999))
        file.openPath = Array("linked/IMG_1.jpg".utf8)
        let item = Manifest.Item(
            index: 0, section: 0, item: 0, path: "2019/IMG_1.jpg",
            file: .init(bytes: 2_817_364, modified: "1969-12-31T00:00:00.999999999Z", sha256: String(repeating: "a", count: 64)),
            image: .init(
                format: "jpeg", width: 3024, height: 4032, storedWidth: 4032, storedHeight: 3024, orientation: 6, pages: 1,
                hasAlpha: false, interlaced: false),
            exif: .init(capturedAt: "2019-06-01T12:00:00", offset: "+02:00", make: "Apple", model: "iPhone X"),
            thumbnails: [
                "grid": .init(path: "thumbs/ab/ab.jpg", width: 256, height: 256, crop: .init(x: 0, y: 0.125, width: 1, height: 0.75))
            ],
            layouts: ["phone": LayoutEngine.layout(width: 3024, height: 4032, viewport: Viewport.defaults[0], preset: .jx3)])
        let work = ReusePlan.Work(
            file: file, previous: item, known: true, wasItem: true,
            placeholder: .init(
                sha256: String(repeating: "b", count: 64), placeholder: .init(thumbhash: "3OcRJYB4d3h/iIeHeEh3eIhw+j3A", color: "#7f7f7f")),
            recorded: ["thumbs/ab/ab.jpg": 12_345, "thumbs/cd/cd.webp": 0])
        var job = WorkerProtocol.Job(work, sha256: String(repeating: "c", count: 64))
        job.previousIdentifier = "5A0D7B6C-0000-4000-8000-000000000001"
        return job
    }()

    static let item = WorkerProtocol.Done(
        outcome: .item(json: Array(#"{"file":{"bytes":1}}"#.utf8)), outputUnwritable: "No space left on device",
        note: "motion: no rendition", motion: 1_000..<3_500)

    static let failure = WorkerProtocol.Done(
        outcome: .failed(.init(path: "broken.jpg", stage: "decode", reason: "premature end of JPEG file", bytes: 10)),
        outputUnwritable: nil)

    @Test("a job and each kind of outcome read back as written, every field")
    func roundTrips() throws {
        let body = Array(WorkerProtocol.ToWorker.job(Self.job).wire.dropFirst(4))
        guard case .job(let job) = try WorkerProtocol.ToWorker(wire: body) else {
            Issue.record("not a job")
            return
        }
        #expect(job.rawPath == Self.job.rawPath && job.openPath == Self.job.openPath && job.stat == Self.job.stat)
        #expect(job.previous == Self.job.previous && job.known?.placeholder == Self.job.known?.placeholder)
        #expect(job.recorded == Self.job.recorded && job.previousIdentifier == Self.job.previousIdentifier)
        #expect(job.sha256 == Self.job.sha256)
        #expect(job.source.rawPath == [UInt8]("2019/f".utf8) + [0xFF] + [UInt8]("o/IMG_1.jpg".utf8))
        #expect(job.source.openPath == Array("linked/IMG_1.jpg".utf8) && job.source.stat == Self.job.stat)
        for done in [Self.item, Self.failure] {
            let body = Array(WorkerProtocol.FromWorker.done(done).wire.dropFirst(4))
            guard case .done(let read) = try WorkerProtocol.FromWorker(wire: body) else {
                Issue.record("not an outcome")
                return
            }
            #expect(read.outputUnwritable == done.outputUnwritable && read.note == done.note && read.motion == done.motion)
            switch (read.outcome, done.outcome) {
            case (.item(let a), .item(let b)): #expect(a == b)
            case (.failed(let a), .failed(let b)): #expect(a == b)
            default: Issue.record("\(read.outcome) read back as another kind")
            }
        }
        let ready = WorkerProtocol.FromWorker.ready(sandbox: .init(seccomp: nil, landlock: "Function not implemented"), memory: nil)
        guard case .ready(let sandbox, let memory) = try WorkerProtocol.FromWorker(wire: Array(ready.wire.dropFirst(4))) else {
            Issue.record("not ready")
            return
        }
        #expect(sandbox == .init(seccomp: nil, landlock: "Function not implemented") && memory == nil)
    }

    @Test("the frame's length is the body's, big-endian, as the inbox reads it from a descriptor")
    func framed() throws {
        let wire = WorkerProtocol.ToWorker.job(Self.job).wire
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        func send(_ bytes: ArraySlice<UInt8>) { _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } }
        var inbox = WorkerProtocol.Inbox()
        send(wire.dropLast())
        #expect(inbox.fill(from: ends[0]) == wire.count - 1)
        #expect(inbox.next() == nil, "one byte short is no message yet")
        send(wire.suffix(1))
        #expect(inbox.fill(from: ends[0]) == 1)
        #expect(inbox.next() == Array(wire.dropFirst(4)))
        #expect(inbox.next() == nil)
    }

    @Test("every cut of a message, a byte too many, an unknown tag and lengths past the end are refused")
    func refusesWhatIsNotAMessage() {
        let bodies = [
            Array(WorkerProtocol.ToWorker.job(Self.job).wire.dropFirst(4)),
            Array(WorkerProtocol.FromWorker.done(Self.item).wire.dropFirst(4)),
            Array(WorkerProtocol.FromWorker.done(Self.failure).wire.dropFirst(4)),
        ]
        func parses(_ body: [UInt8], toWorker: Bool) -> Bool {
            toWorker ? (try? WorkerProtocol.ToWorker(wire: body)) != nil : (try? WorkerProtocol.FromWorker(wire: body)) != nil
        }
        for (number, body) in bodies.enumerated() {
            let toWorker = number == 0
            #expect(parses(body, toWorker: toWorker))
            for cut in 0..<body.count {
                #expect(!parses(Array(body.prefix(cut)), toWorker: toWorker), "message \(number) cut at \(cut) of \(body.count)")
            }
            #expect(!parses(body + [0], toWorker: toWorker), "message \(number) with a byte too many")
            #expect(!parses([9] + body.dropFirst(), toWorker: toWorker), "message \(number) with an unknown tag")
        }
        // The job's first field is its path's length: the extremes of an 8-byte integer.
        for length in [Int.max, Int.min, -1, bodies[0].count] {
            var body = bodies[0]
            withUnsafeBytes(of: length.littleEndian) { body.replaceSubrange(1..<9, with: $0) }
            #expect(!parses(body, toWorker: true), "a path length of \(length)")
        }
        // The file's hash is 64 lowercase hex digits, or the job is not one.
        for hash in [String(repeating: "C", count: 64), String(repeating: "c", count: 63), "../" + String(repeating: "c", count: 61)] {
            var job = Self.job
            job.sha256 = hash
            #expect(!parses(Array(WorkerProtocol.ToWorker.job(job).wire.dropFirst(4)), toWorker: true), "a hash \(hash)")
        }
    }
}
