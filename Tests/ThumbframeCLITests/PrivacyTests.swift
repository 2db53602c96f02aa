import CThumbframeShim
import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// What no output may carry, and where no reader may go: the metadata of originals in
/// thumbnails of every format, and files outside the manifest's folder reached through its
/// page paths or links below it.
@Suite("Privacy and reading inside OUT_DIR", .serialized)
struct PrivacyTests {
    /// Metadata groups (exiftool's family 0) that no thumbnail may hold.
    static let forbiddenGroups: Set<String> = ["EXIF", "XMP", "IPTC", "ICC_Profile", "MakerNotes", "Photoshop", "PNG", "APP1"]

    @Test("no thumbnail of any format carries EXIF, GPS, XMP, IPTC, an ICC profile or a comment (exiftool)")
    func thumbnailsCarryNoMetadata() async throws {
        guard let exiftool = Processes.tool("exiftool") else {
            print("skipped: exiftool is not installed (scripts/bootstrap --test installs it)")
            return
        }
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/gps.jpg", width: 320, height: 240)
            try Fixtures.writeImage(to: source + "/text.png", width: 120, height: 90, format: TF_FORMAT_PNG)
            for file in ["gps.jpg", "text.png"] {
                let tagged = try await Processes.run(
                    exiftool,
                    [
                        "-q", "-overwrite_original", "-GPSLatitude=48.137", "-GPSLatitudeRef=N", "-GPSLongitude=11.575",
                        "-GPSLongitudeRef=E", "-Make=Secret Camera", "-Model=Model X", "-DateTimeOriginal=2020:01:02 03:04:05",
                        "-XMP-dc:Title=private title", "-IPTC:City=Munich", "-Comment=private comment", source + "/" + file,
                    ])
                #expect(tagged.status == 0, "\(tagged.stderr)")
            }
            let run = try await CLITests.run([
                "build", source, "--out", root + "/out", "--thumb", "j=100x100:jpeg", "--thumb", "w=100x100:cover:webp",
                "--thumb", "a=100x100:avif",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            // Deep-zoom tiles, JPEG and WebP (whose libvips encoder writes an EXIF block of its own).
            for (out, display) in [("/tiles-jpg", "j=100x100:jpeg"), ("/tiles-webp", "p=100x100:webp")] {
                let tiled = try await CLITests.run([
                    "build", source, "--out", root + out, "--thumb", display, "--ladder-max-side", "0", "--tile-pixels", "10000",
                ])
                #expect(tiled.status == 0, "\(tiled.stderr)")
                let pyramids = try ManifestFile.load(root + out + "/manifest.json").items.compactMap { $0.thumbnails["tiles"] }
                #expect(pyramids.count == 2, "\(out)")
                for pyramid in pyramids {
                    let folder = root + out + "/" + pyramid.path.dropLast(4) + "_files"
                    let dump = try await Processes.run(exiftool, ["-j", "-a", "-G0", "-n", "-r", folder])
                    let files = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]])
                    #expect(files.count == pyramid.tiles?.files)
                    for tags in files {
                        let groups = Set(tags.keys.compactMap { $0.split(separator: ":").first.map(String.init) })
                        #expect(groups.isDisjoint(with: Self.forbiddenGroups), "\(out) \(tags["SourceFile"] ?? ""): \(groups.sorted())")
                    }
                    for secret in ["48.137", "Secret Camera", "private title", "Munich", "private comment", "2020:01:02"] {
                        #expect(!dump.stdout.contains(secret), "\(out) tiles still say \(secret)")
                    }
                }
            }
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count == 2)
            for item in manifest.items {
                for (name, thumbnail) in item.thumbnails {
                    let dump = try await Processes.run(exiftool, ["-j", "-a", "-G0", "-n", root + "/out/" + thumbnail.path])
                    let tags = try #require(
                        (try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]])?.first)
                    let groups = Set(tags.keys.compactMap { $0.split(separator: ":").first.map(String.init) })
                    #expect(groups.isDisjoint(with: Self.forbiddenGroups), "\(item.path) \(name): \(groups.sorted())")
                    let text = dump.stdout
                    for secret in ["48.137", "Secret Camera", "private title", "Munich", "private comment", "2020:01:02"] {
                        #expect(!text.contains(secret), "\(item.path) \(name) still says \(secret)")
                    }
                }
            }
        }
    }

    /// What the fixture library's files say that no output may: the place they were taken
    /// (decimal and ISO 6709), the owner, titles, comments, the city, the encoder.
    static let secrets = ["48.137", "+48.1370", "11.575", "Alice Secret", "private title", "private comment", "Munich", "Lavf"]
    /// Tags (exiftool's names, any group) no published video may carry.
    static let forbiddenVideoTags = [
        "GPS", "Location", "Artist", "Author", "Title", "Comment", "Copyright", "Make", "Model", "Software", "Encoder", "Owner",
    ]

    @Test(
        "no file a build writes, of any kind (thumbnails, posters, motion MP4s, pages, the viewer), carries a location, an owner, a title, an encoder tag or the source's path (exiftool and the bytes)",
        .enabled(if: Fixtures.ffmpeg != nil && Processes.tool("exiftool") != nil, "needs ffmpeg and exiftool (scripts/bootstrap --test)")
    )
    func noOutputCarriesPrivateFacts() async throws {
        let exiftool = try #require(Processes.tool("exiftool"))
        let ffmpeg = try #require(Fixtures.ffmpeg)
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/photos"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/gps.jpg", width: 320, height: 240)
            try Fixtures.reencode(source + "/gps.jpg", to: source + "/phone.heic", options: "[Q=80]")
            let tagged = try await Processes.run(
                exiftool,
                [
                    "-q", "-overwrite_original", "-GPSLatitude=48.137", "-GPSLatitudeRef=N", "-GPSLongitude=11.575",
                    "-GPSLongitudeRef=E", "-Artist=Alice Secret", "-XMP-dc:Title=private title", "-IPTC:City=Munich",
                    "-Comment=private comment", source + "/gps.jpg", source + "/phone.heic",
                ])
            #expect(tagged.status == 0, "\(tagged.stderr)")
            // A video and a Motion Photo's MP4 with the place, the owner and titles as phones and
            // editors write them: udta ©xyz and the QuickTime `mdta` keys.
            let clip = root + "/clip.mp4"
            let made = try await Processes.run(
                ffmpeg,
                [
                    "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=192x144:rate=30:duration=1", "-f", "lavfi", "-i",
                    "sine=duration=1", "-c:v", "libx264", "-c:a", "aac", "-metadata", "location=+48.1370+011.5750/",
                    "-metadata", "artist=Alice Secret", "-metadata", "title=private title", "-metadata", "comment=private comment",
                    "-movflags", "use_metadata_tags", "-metadata", "com.apple.quicktime.location.ISO6709=+48.1370+011.5750/",
                    "-metadata", "com.apple.quicktime.author=Alice Secret", clip,
                ])
            #expect(made.status == 0, "\(made.stderr)")
            try FileManager.default.copyItem(atPath: clip, toPath: source + "/video.mp4")
            let mp4 = Array(try Data(contentsOf: URL(fileURLWithPath: clip)))
            try Fixtures.writeMotionPhoto(to: source + "/PXL_1.MP.jpg", width: 160, height: 120, mp4: mp4, style: .microVideo)
            let out = root + "/out"
            // Small display thumbnails and no ladder, so the photos get deep-zoom tiles too.
            let run = try await CLITests.run([
                "build", source, "--out", out, "--viewer", "--thumb", "p=100x100:webp", "--thumb", "grid=64x64:cover",
                "--ladder-max-side", "0", "--tile-pixels", "10000",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.items.count == 4 && manifest.items.contains { $0.motion?.path != nil })

            // Every file thumbframe wrote, as bytes.
            let files = try #require(FileManager.default.enumerator(atPath: out)?.allObjects as? [String]).filter { relative in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: out + "/" + relative, isDirectory: &isDirectory) && !isDirectory.boolValue
            }
            #expect(files.contains { $0.hasSuffix(".mp4") } && files.contains { $0.hasSuffix(".dzi") } && files.contains("index.html"))
            for relative in files where !relative.hasPrefix(".thumbframe") {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: out + "/" + relative))
                for secret in Self.secrets + [source, root] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(relative) says \(secret)")
                }
            }
            // And as exiftool reads them (decoded: a value written in another encoding too).
            let dump = try await Processes.run(exiftool, ["-j", "-a", "-G1", "-n", "-r", "-ext", "*", "--ext", "json", out])
            let read = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]])
            #expect(read.count >= files.count { !$0.hasSuffix(".json") && !$0.hasPrefix(".thumbframe") })
            for tags in read {
                let file = tags["SourceFile"] as? String ?? ""
                for (name, value) in tags where !name.hasPrefix("System:") && name != "SourceFile" {
                    let tag = String(name.split(separator: ":").last ?? "")
                    if file.hasSuffix(".mp4") {
                        #expect(!Self.forbiddenVideoTags.contains { tag.contains($0) }, "\(file): \(name) = \(value)")
                    }
                    for secret in Self.secrets { #expect(!"\(value)".contains(secret), "\(file): \(name) = \(value)") }
                }
            }
        }
    }

    @Test("readers open pages and thumbnails only below the manifest's folder, never through a link; the manifest itself may be a link")
    func readersStayInside() async throws {
        try await SafetyTests.withBuiltLibrary(3) { root, _, out in
            let manifestPath = out + "/manifest.json"
            let document = try ManifestFile.open(manifestPath).document
            let page = try #require(document.sections.first?.pages?.first)
            let item = try #require(try ManifestFile.load(manifestPath).items.first)
            let fanout = String(try #require(item.thumbnails["grid"]?.path.split(separator: "/")[1]))

            // The manifest named through a link works (its folder is the link's target's).
            try FileManager.default.createSymbolicLink(atPath: root + "/current.json", withDestinationPath: manifestPath)
            for command in [["inspect", "--files"], ["validate"], ["lookup", "--index", "0"], ["show", "--index", "1"]] {
                let run = try await CLITests.run([command[0], root + "/current.json"] + command.dropFirst())
                #expect(run.status == 0, "\(command) through a link: \(run.stderr)")
            }

            // A thumbnail fan-out directory swapped for a link to another folder holding the same
            // files: validate and inspect --files do not look through it.
            try FileManager.default.moveItem(atPath: out + "/thumbs/" + fanout, toPath: root + "/elsewhere")
            try FileManager.default.createSymbolicLink(atPath: out + "/thumbs/" + fanout, withDestinationPath: root + "/elsewhere")
            let validate = try await CLITests.run(["validate", manifestPath])
            #expect(validate.status == 65 && validate.stdout.contains("symbolic link"), "\(validate.stdout)")
            let inspect = try await CLITests.run(["inspect", "--files", "--json", manifestPath])
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])
            #expect((summary["missingThumbnails"] as? Int ?? 0) >= 1, "\(inspect.stdout)")

            // The pages folder swapped for a link: no reader reads a page through it.
            try FileManager.default.moveItem(atPath: out + "/pages", toPath: root + "/pages-elsewhere")
            try FileManager.default.createSymbolicLink(atPath: out + "/pages", withDestinationPath: root + "/pages-elsewhere")
            for command in [["lookup", "--index", "0"], ["show", "--index", "0"], ["diff", manifestPath]] {
                let run = try await CLITests.run([command[0], manifestPath] + command.dropFirst())
                #expect(run.status == 65, "\(command) read a page through a link: \(run.stdout) \(run.stderr)")
            }
            #expect(throws: (any Error).self) { try ManifestReader(contentsOf: URL(fileURLWithPath: manifestPath)).path(at: 0) }

            // A top document naming a page outside pages/ (here the same bytes one folder up):
            // the Swift library's path(at:), lookup's route, refuses it.
            try FileManager.default.removeItem(atPath: out + "/pages")
            try FileManager.default.moveItem(atPath: root + "/pages-elsewhere", toPath: out + "/pages")
            try Fixtures.write(Array(try Data(contentsOf: URL(fileURLWithPath: out + "/" + page.path))), to: root + "/outside.json")
            let text = try String(contentsOfFile: manifestPath, encoding: .utf8)
            try text.replacingOccurrences(of: page.path, with: "pages/../../outside.json")
                .write(toFile: manifestPath, atomically: false, encoding: .utf8)
            let reader = try ManifestReader(contentsOf: URL(fileURLWithPath: manifestPath))
            #expect(throws: ManifestError.self) { try reader.path(at: 0) }
            #expect(try await CLITests.run(["lookup", manifestPath, "--index", "0"]).status == 65)
            // (The schema check of scripts/test reads every manifest the suite leaves behind.)
            try text.write(toFile: manifestPath, atomically: false, encoding: .utf8)
        }
    }
}
