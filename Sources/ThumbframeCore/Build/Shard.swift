import Foundation

/// One of N parts of a library (`--shard K/N`): the files whose path hashes to K. Every shard
/// walks the whole source (to agree on what the library is), processes only its files, and
/// keeps its result in its own state index beside the shared thumbnails; `merge` publishes the
/// manifest from all of them.
package struct Shard: Equatable, Sendable {
    /// 0-based, as `SLURM_ARRAY_TASK_ID` (with `--array=0-…`) and `JOB_COMPLETION_INDEX` count.
    package var index: Int
    package var count: Int

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `K/N` or `auto/N` (K from `JOB_COMPLETION_INDEX`, else `SLURM_ARRAY_TASK_ID`).
    package static func parse(_ text: String, environment: [String: String]) throws(ThumbframeError) -> Shard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[1]), count >= 1, count <= 10_000 else {
            throw .invalidOptions("--shard wants K/N or auto/N with 1 ≤ N ≤ 10000, not '\(text)'")
        }
        let index: Int
        if parts[0] == "auto" {
            let names = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"]
            guard let name = names.first(where: { environment[$0] != nil }), let value = environment[name] else {
                throw .invalidOptions(
                    "--shard auto/\(count): neither JOB_COMPLETION_INDEX (Kubernetes) nor SLURM_ARRAY_TASK_ID (Slurm) is set")
            }
            guard let parsed = Int(value) else { throw .invalidOptions("--shard auto: \(name) is '\(value)', not a number") }
            index = parsed
        } else {
            guard let parsed = Int(parts[0]) else { throw .invalidOptions("--shard wants K/N, not '\(text)'") }
            index = parsed
        }
        guard (0..<count).contains(index) else {
            throw .invalidOptions("--shard \(index)/\(count): K counts from 0 to \(count - 1)")
        }
        return Shard(index: index, count: count)
    }

    /// `K-of-N`, in the names of the shard's files.
    var tag: String { "\(index)-of-\(count)" }
    var stateName: String { ".thumbframe-shard-\(tag).sqlite" }
    var lockName: String { ".thumbframe-shard-\(tag).lock" }

    /// Whether a file belongs to this shard: the first 8 bytes of the SHA-256 of its path's
    /// bytes, modulo N (stable across machines, runs and versions).
    func contains(_ pathBytes: [UInt8]) -> Bool {
        Self.number(of: pathBytes, count: count) == index
    }

    static func number(of pathBytes: [UInt8], count: Int) -> Int {
        let hex = pathBytes.withUnsafeBytes(Digest.sha256)
        return Int(UInt64(hex.prefix(16), radix: 16)! % UInt64(count))
    }

    /// What every shard must agree on for a merge: the files of the whole walk (path bytes,
    /// size, modification time) and its failures.
    static func walkDigest(_ walk: SourceWalker.Result) -> String {
        var lines: [UInt8] = []
        for file in walk.files.sorted(by: { $0.rawPath.lexicographicallyPrecedes($1.rawPath) }) {
            lines += file.rawPath + Array("\t\(file.stat.size)\t\(file.stat.modifiedRFC3339)\n".utf8)
        }
        lines += Array(walk.failuresKey.utf8)
        lines += Array(walk.skipped.sorted { $0.key < $1.key }.map { "\n\($0.key)\t\($0.value)" }.joined().utf8)
        return lines.withUnsafeBytes(Digest.sha256)
    }
}
