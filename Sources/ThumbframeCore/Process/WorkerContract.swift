import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// What a decode worker may say about a job, checked before anything of it is stored or
/// published: a worker runs decoders on files from anywhere, and code an attacker placed in one
/// speaks on its socket as freely as the worker does. An answer outside the contract fails that
/// one file ("the decoder broke its contract"), the worker is replaced, and nothing of it is kept.
///
/// The build takes facts, never decisions: the item is decoded (nesting and size capped), every
/// number range-checked and every path, hash and colour held to its format, and then encoded by the
/// build itself, with the columns it derives (capture time, pair, stack evidence, owned files); a
/// failure is always the job's own file; a claim that OUT_DIR cannot be written is tested here.
enum WorkerContract {
    /// Why an answer was refused.
    struct Breach: Error {
        var what: String
    }

    /// The deepest nesting of arrays and objects an item's JSON has (its deepest today: 5).
    static let maximumDepth = 16
    /// The longest an item's JSON is (a RAW with every fact and a stack of thumbnails: ~6 KiB).
    static let maximumItemBytes = 256 << 10
    /// The longest side of a picture anything decodes (libvips' own limit is 10 000 000).
    static let maximumSide = 10_000_000
    /// The brightest headroom a gain map may claim (`Manifest.maximumHeadroom`).
    static let maximumHeadroom = Manifest.maximumHeadroom

    /// A job's outcome as the build may keep it.
    enum Checked {
        /// The item's facts, checked; its files are still to be named and taken (`ScratchOutputs`).
        case item(StateIndex.StoredItem)
        /// A failure of the job's own file.
        case failed(Manifest.Failure)
    }

    /// `done`'s outcome as the build may keep it, or why not.
    static func checked(_ done: WorkerProtocol.Done, source: SourceFile, setup: WorkerProtocol.Setup) throws(Breach) -> Checked {
        switch done.outcome {
        case .failed(let failure):
            // Only the stage and cause are taken as the worker said them; the file is the job's. A
            // worker knows when its memory cap or deadline stopped a decode, not when it crashed.
            guard let stage = FailureStage(rawValue: failure.stage) else { throw Breach(what: "a failure of no stage") }
            let cause = failure.cause.map(FailureCause.init(rawValue:))
            guard cause != .some(nil), cause != .some(.crash) else { throw Breach(what: "a failure of a cause it cannot know") }
            return .failed(ItemProcessor.failure(source, stage, sentence(failure.reason), cause: cause ?? nil))
        case .item(let json):
            return .item(try item(json, source: source, setup: setup))
        }
    }

    /// The state index's form of a checked item whose files the build took.
    static func encoded(_ stored: StateIndex.StoredItem) throws(Breach) -> StateIndex.EncodedItem {
        let captured = stored.exif?.capturedAt ?? String(stored.file.modified.prefix(19))
        do {
            return try StateIndex.EncodedItem(stored, captured: captured)
        } catch {
            throw Breach(what: "an item that does not encode")
        }
    }

    /// The item's facts, decoded and checked.
    static func item(_ json: [UInt8], source: SourceFile, setup: WorkerProtocol.Setup) throws(Breach) -> StateIndex.StoredItem {
        guard json.count <= maximumItemBytes else { throw Breach(what: "an item of \(json.count) bytes") }
        guard depth(json) <= maximumDepth else { throw Breach(what: "an item nested deeper than \(maximumDepth)") }
        guard let stored = try? JSONDecoder().decode(StateIndex.StoredItem.self, from: Data(json)) else {
            throw Breach(what: "an item that is not one")
        }
        var consistency = Manifest.ItemConsistency(sections: [Manifest.Section(name: ".", title: ".", start: 0, count: 1)])
        if let problem = consistency.problems(of: ReusePlan.item(stored, source), at: 0).first { throw Breach(what: problem) }
        // (Its time may be an earlier one: a touched file keeps the time its bytes were first read.)
        guard stored.file.bytes == source.stat.size else { throw Breach(what: "another file's size") }
        let image = stored.image
        for side in [image.width, image.height, image.storedWidth, image.storedHeight] where side > maximumSide {
            throw Breach(what: "a picture \(side) pixels a side")
        }
        // Thumbnails only under the names this build makes, of sizes a picture has. (Their paths,
        // byte sizes, hashes and pyramid counts are not checked: `ScratchOutputs` replaces them.)
        var names = Set(setup.recipes.map(\.name))
        names.insert(Manifest.tilesName)
        for rung in setup.settings?.ladder?.renditions ?? [] { names.insert(rung.name) }
        for (name, thumbnail) in stored.thumbnails {
            guard names.contains(name) else { throw Breach(what: "a thumbnail named \(sentence(name))") }
            guard thumbnail.width <= maximumSide, thumbnail.height <= maximumSide else {
                throw Breach(what: "a thumbnail of no possible size")
            }
            if let headroom = thumbnail.headroom, !(1...maximumHeadroom).contains(headroom) {
                throw Breach(what: "a gain map's headroom of \(headroom)")
            }
        }
        for video in [stored.media?.video, stored.media?.motion?.video].compactMap({ $0 }) {
            guard video.duration.isFinite, video.duration < 1e7, video.frameRate.isFinite, video.frameRate < 1e6 else {
                throw Breach(what: "a video of no possible duration or frame rate")
            }
        }
        // Short texts: what cameras write, not a page of the attacker's.
        let texts = [stored.contentIdentifier, stored.burst?.id, stored.exif?.make, stored.exif?.model]
        for text in texts.compactMap({ $0 }) where text.utf8.count > 256 {
            throw Breach(what: "a text of \(text.utf8.count) bytes")
        }
        if let problem = ManifestValidator.Checker.placeProblem(stored.place, setup.settings?.locations) {
            throw Breach(what: problem)
        }
        return stored
    }

    /// How deep arrays and objects nest in `json` (strings skipped), counted without parsing it.
    static func depth(_ json: [UInt8]) -> Int {
        var (depth, deepest, inString, escaped) = (0, 0, false, false)
        for byte in json {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// A worker's words as one printable line of at most 300 characters.
    static func sentence(_ text: String) -> String {
        let printable = text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : String($0) }.joined()
        return String(printable.prefix(300))
    }
}
