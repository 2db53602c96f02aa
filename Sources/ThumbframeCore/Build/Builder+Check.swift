import Foundation
import ThumbframeImaging
import ThumbframeManifest

extension Builder {
    /// `--check`: names what a build would change, writing nothing. The index counts only when
    /// its rows were made with these recipes and this thumbframe and libvips (`itemsMatch`).
    func check(walk: SourceWalker.Result, plan: ReusePlan, site: BuildSite, itemsMatch: Bool) throws(ThumbframeError) -> BuildReport {
        let (index, problem, published) = (itemsMatch ? site.index : nil, site.problem, site.published)
        let (source, output, hasManifest) = (site.source, site.output, site.hasManifest)
        var stale: [String] = []
        var staleness = BuildReport.Staleness()
        if let problem {
            staleness.manifest = problem
        } else if !hasManifest {
            staleness.manifest = "no manifest.json yet"
        } else if index == nil {
            staleness.manifest = "settings or thumbframe version changed: every item would be rebuilt"
        }
        if let reason = staleness.manifest { stale.append(reason) }
        if problem == nil, !hasManifest {
            // Never built: every file the walk found would be added (listed as the manifest lists items).
            staleness.added = plan.work.sorted { SourceFile.inDisplayOrder($0.file, $1.file) }.map(\.file.relativePath)
        }
        var failures = walk.failures
        var reused = 0
        if let index, let output, stale.isEmpty {
            do {
                reused = plan.reusedItems
                // Listed the way the manifest lists items.
                for unit in plan.work.sorted(by: { SourceFile.inDisplayOrder($0.file, $1.file) }) {
                    let path = unit.file.relativePath
                    // --verify: the same bytes, source and thumbnails, mean reusable; hashing writes nothing.
                    // Hashed a block at a time: a video of any size, a photo without holding it.
                    if let item = unit.previous, let file = try? source.open(unit.file), let stat = file.stat(),
                        Digest.sha256(fd: file.fd, size: stat.size) == item.file.sha256
                    {
                        // The build's own test, so --check --verify calls stale what --verify rewrites.
                        if ItemProcessor.thumbnailsIntact(item, output: output) {
                            reused += 1
                        } else {
                            stale.append("thumbnails changed for \(path)")
                            staleness.thumbnails.append(path)
                        }
                        continue
                    }
                    // A broken file's recorded bytes, touched: it stays as it failed.
                    if let recorded = unit.recordedFailure, let file = try? source.open(unit.file), let stat = file.stat(),
                        Digest.sha256(fd: file.fd, size: stat.size) == recorded.sha256
                    {
                        continue
                    }
                    stale.append(unit.known ? "changed \(path)" : "added \(path)")
                    if unit.known { staleness.changed.append(path) } else { staleness.added.append(path) }
                }
                let videos = try index.renditionsStale(options.renditions.canonical)
                if videos > 0 {
                    let reason = "video renditions are made otherwise now: \(videos) items would get theirs again"
                    stale.append(reason)
                    staleness.manifest = staleness.manifest ?? reason
                }
                // The scan that made the plan ran in path byte order.
                staleness.removed = plan.missing.map { String(decoding: $0.path, as: UTF8.self) }
                stale += staleness.removed.map { "removed \($0)" }
                let gone = Set(plan.missing.map(\.path))
                stale += plan.missingThumbnails.map { "thumbnails missing or changed for \($0)" }
                staleness.thumbnails += plan.missingThumbnails
                try index.forEachEntry(failed: true) { path, stored in
                    if !gone.contains(path), let failure = stored.failure() { failures.append(failure) }
                }
            } catch {
                throw .manifestUnreadable(path: index.path, reason: error.description)
            }
            let publisher = Publisher(
                index: index, output: output, settings: options.settings, sourceTitle: options.sourceTitle,
                verify: options.verify, events: events)
            if stale.isEmpty,
                published.settings != options.settings.canonicalKey || published.walkFailures != walk.failuresKey
                    || published.skipped ?? [:] != walk.skipped
                    || !published.clean || !publisher.manifestIntact(published)
            {
                staleness.manifest = "manifest.json differs from what a build would write"
                stale.append("manifest.json differs from what a build would write")
            }
        }
        return BuildReport(
            manifestPath: site.manifestPath, items: stale.isEmpty ? published.items : 0,
            sections: stale.isEmpty ? published.sections : 0, failures: Manifest.Failure.ordered(failures), thumbnailsWritten: 0,
            manifestWritten: false, reused: reused, stale: stale, staleness: staleness, skipped: walk.skipped)
    }
}
