import Foundation
import ThumbframeManifest

/// Removes what no manifest needs any more from `OUT_DIR/thumbs` and `OUT_DIR/pages`: thumbnails
/// of deleted or changed sources, pages no top document names, and temporary files of
/// interrupted runs. Only files thumbframe wrote are
/// candidates: names of its content-address shape that the ledger, the journal or the previous
/// manifest record (and temporary names of its own shape). Anything else under `thumbs/` — a
/// user's `2019-holiday/beach.jpg`, a `notes.txt` — is left where it is and reported once.
/// Runs only after the new manifest is in place (and under the build lock), so no manifest
/// ever names a pruned file; then settles the ledger to exactly what the manifest names.
struct Pruner {
    var output: OutputDirectory

    /// What a prune did.
    struct Outcome: Equatable {
        /// Thumbnails and leftover temporary files removed (pages no longer named are removed too,
        /// not counted).
        var removed = 0
        /// Files under `thumbs/` that thumbframe did not write.
        var foreign = 0
        var foreignExample: String?

        /// The warning about files left alone, or nil when there are none.
        var foreignNote: String? {
            guard foreign > 0, let foreignExample else { return nil }
            return "left \(foreign) file\(foreign == 1 ? "" : "s") under thumbs/ or pages/ that thumbframe did not write "
                + "(such as \(foreignExample))"
        }
    }

    /// True when a run wrote thumbnails and did not settle after (killed after its manifest was
    /// renamed, or during pruning), when no ledger exists yet (a directory of thumbframe 0.1),
    /// or when a temporary file of a killed run lies in OUT_DIR: a prune is due even if the
    /// manifest does not change.
    var isUnsettled: Bool {
        let ledger = output.root.stat(Array(OutputDirectory.ledgerName.utf8))
        let journal = output.root.stat(Array(OutputDirectory.journalName.utf8))
        if ledger == nil || (journal?.size ?? 0) > 0 { return true }
        return (try? output.root.entries())?.contains(where: TemporaryName.matches) ?? false
    }

    /// Removes what thumbframe owns and `keep` (every thumbnail and page the manifest names) does
    /// not; throws when the ledger cannot be written (it is written again by the next run).
    func prune(keeping keep: OwnedNames) throws(ThumbframeError) -> Outcome {
        var outcome = Outcome()
        // Fan-out directories that lost a file, each by one path in it.
        var emptied: [String: String] = [:]
        for candidate in output.ownedNames().sorted where !keep.contains(candidate) {
            let path = candidate.path
            // A pyramid goes with its `.dzi`, even when a killed run left the tiles without one.
            guard path.hasSuffix(".dzi") ? output.removePyramid(dzi: path) : output.remove(file: path) else { continue }
            // Reported: thumbnails; pages come and go with every manifest change.
            if path.hasPrefix("thumbs/") { outcome.removed += 1 }
            emptied[candidate.fanoutKey] = path
        }
        // Temporary files of killed runs, and a look at what else is there.
        for temporary in (try? output.root.entries()) ?? [] where output.removeTemporary(temporary, area: nil) {
            outcome.removed += 1
        }
        for area in ["thumbs", "pages"] {
            output.forEachListing(area) { directory, entries in
                let prefix = area + "/" + (directory.isEmpty ? "" : String(decoding: directory, as: UTF8.self) + "/")
                for entry in entries.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    if output.removeTemporary(entry, area: area, directory: directory) {
                        outcome.removed += 1
                        continue
                    }
                    let path = prefix + String(decoding: entry, as: UTF8.self)
                    // A fan-out directory is thumbframe's; its files were looked at above.
                    if directory.isEmpty, entry.count == 2, entry.allSatisfy(TemporaryName.isLowerHex) { continue }
                    if keep.contains(path: path) { continue }
                    // The tiles folder of a kept pyramid.
                    if entry.count == 38, entry.suffix(6).elementsEqual("_files".utf8),
                        keep.contains(path: String(path.dropLast(6)) + ".dzi")
                    {
                        continue
                    }
                    outcome.foreign += 1
                    if outcome.foreignExample == nil { outcome.foreignExample = TerminalText.safe(path) }
                }
            }
        }
        for path in emptied.values.sorted() { output.removeFanoutIfEmpty(of: path) }
        do {
            try output.settle(owned: keep)
        } catch {
            throw .cannotWrite(path: output.path + "/" + OutputDirectory.ledgerName, reason: error.localizedDescription)
        }
        return outcome
    }
}
