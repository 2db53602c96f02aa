import Foundation
import ThumbframeManifest

/// Each section as last written, so an unchanged section is not assembled again.
extension StateIndex {
    /// A section as last written: its item count, pages and summary, so an unchanged section
    /// is not assembled again.
    struct StoredSection: Codable {
        var count: Int
        var pages: [Manifest.PageReference]
        var summary: ManifestDocument.Summary
    }

    func storedSection(_ key: [UInt8]) throws(SQLiteError) -> StoredSection? {
        let select = try database.prepare("SELECT count, pages, summary FROM sections WHERE key = ?")
        select.bind(1, key)
        guard try select.step() else { return nil }
        let decoder = JSONDecoder()
        guard let pages = try? decoder.decode([Manifest.PageReference].self, from: Data(select.bytes(1))),
            let summary = try? decoder.decode(ManifestDocument.Summary.self, from: Data(select.bytes(2)))
        else { return nil }
        return StoredSection(count: select.int(0), pages: pages, summary: summary)
    }

    /// The summary of the manifest as last written: every stored section's, added up (a
    /// section whose summary does not decode counts nothing).
    func storedSummary() throws(SQLiteError) -> ManifestDocument.Summary {
        let select = try database.prepare("SELECT summary FROM sections")
        let decoder = JSONDecoder()
        var total = ManifestDocument.Summary()
        while try select.step() {
            if let summary = try? decoder.decode(ManifestDocument.Summary.self, from: Data(select.bytes(0))) {
                total.merge(summary)
            }
        }
        return total
    }

    /// Replaces every stored section.
    func replaceSections(_ sections: [([UInt8], StoredSection)]) throws(SQLiteError) {
        try beginIfNeeded()
        try database.execute("DELETE FROM sections")
        let insert = try database.prepare("INSERT INTO sections (key, count, pages, summary) VALUES (?, ?, ?, ?)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (key, section) in sections {
            guard let pages = try? encoder.encode(section.pages), let summary = try? encoder.encode(section.summary) else {
                throw SQLiteError(code: 1, message: "cannot encode a section")
            }
            insert.bind(1, key)
            insert.bind(2, section.count)
            insert.bind(3, Array(pages))
            insert.bind(4, Array(summary))
            try insert.run()
        }
        try commit()
    }
}
