import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Places only when asked (`--locations`): no coordinate of any kind in any file without the
/// option; with it, only the chosen precision — a city's, a region's or a grid cell's own point,
/// never the photo's.
@Suite("Places", .serialized)
struct PlacesTests {
    /// Where the fixtures were "taken": Ivry-sur-Seine by Paris, and a field east of Munich.
    static let spots = [("ivry.jpg", 48.812_34, 2.403_21), ("field.jpg", 48.291_87, 11.947_53)]

    /// The coordinates of the spots as text at 2 to 5 decimals, and as exiftool writes them.
    static func traces(decimals: ClosedRange<Int>) -> [String] {
        spots.flatMap { _, lat, lon in
            decimals.flatMap { [String(format: "%.\($0)f", lat), String(format: "%.\($0)f", lon)] }
        } + ["48 deg", "48°", "N 48"]
    }

    /// The first screen's JSON in a viewer's index.html (the manifest and the first cells).
    static func firstScreen(_ page: Data) -> Data {
        let text = String(decoding: page, as: UTF8.self)
        let json = text.components(separatedBy: "id=\"tf-first\">").dropFirst().first?.components(separatedBy: "</script>").first
        return Data((json ?? "").utf8)
    }

    /// Words no text file (JSON, the state index, the viewer) may hold without the option.
    static let words = ["GPS", "Paris", "Ivry", "Erding", "latitude", "longitude", "\"place\""]

    @Test("the settings' text, the grid cells, and the offline table's cities and regions")
    func lookups() throws {
        #expect(Manifest.Locations("cell:25") == .cell(km: 25) && Manifest.Locations("cell:0") == nil)
        #expect(Manifest.Locations("city") == .city && Manifest.Locations("street") == nil && "\(Manifest.Locations.region)" == "region")
        for (lat, lon) in [(48.81234, 2.40321), (-33.9, 151.2), (78.2, 15.6), (0.1, 179.99), (-89.9, -179.9)] {
            for km in [1, 10, 250] {
                let cell = Manifest.Place.cell(latitude: lat, longitude: lon, km: km)
                // The centre's cell is itself; the point lies within the cell's size of it.
                #expect(Manifest.Place.cell(latitude: cell.latitude, longitude: cell.longitude, km: km) == cell)
                let distance = PlaceTable.kilometres((lat, lon), (cell.latitude, cell.longitude))
                #expect(distance <= Double(km) * 0.75 + 0.1 || abs(lat) > 85, "\(lat), \(lon) at \(km) km: \(distance) km")
            }
        }
        let table = PlaceTable.shared
        #expect(table.cities.count > 25_000)
        let paris = try #require(table.place(latitude: 48.8566, longitude: 2.3522, .city))
        #expect(paris.name == "Paris" && paris.country == "FR" && paris.region == "Ile-de-France" && paris.cell == nil)
        let region = try #require(table.place(latitude: 48.8566, longitude: 2.3522, .region))
        #expect(region.name == nil && region.region == "Ile-de-France" && region.country == "FR")
        #expect(PlaceTable.kilometres((region.latitude, region.longitude), (48.85, 2.35)) < 60)
        #expect(table.place(latitude: 0, longitude: -30, .city) == nil, "the middle of the Atlantic")
        #expect(table.place(latitude: -41.29, longitude: 174.78, .city)?.country == "NZ")
        #expect(table.place(latitude: 64.84, longitude: -147.72, .city)?.name == "Fairbanks")
    }

    /// Two JPEGs with GPS positions (exiftool), built with `extra`, into OUT.
    static func build(_ root: String, _ locations: Manifest.Locations) async throws -> (out: String, manifest: Manifest) {
        let lib = root + "/lib"
        if !FileManager.default.fileExists(atPath: lib) {
            try Fixtures.makeDirectory(lib)
            for (name, lat, lon) in spots {
                try Fixtures.writeImage(to: lib + "/" + name, width: 320, height: 240)
                let tagged = try await Processes.run(
                    try #require(Processes.tool("exiftool")),
                    [
                        "-q", "-overwrite_original", "-GPSLatitude=\(lat)", "-GPSLatitudeRef=N", "-GPSLongitude=\(lon)",
                        "-GPSLongitudeRef=E", lib + "/" + name,
                    ])
                #expect(tagged.status == 0, "\(tagged.stderr)")
            }
        }
        let out = root + "/out-\(locations)".replacingOccurrences(of: ":", with: "-")
        var options = BuildOptions(source: lib, output: out, jobs: 2)
        options.locations = locations
        options.viewer = true
        let (_, manifest) = try await Fixtures.build(options)
        #expect(try ManifestValidator.problems(at: out + "/manifest.json").isEmpty)
        return (out, manifest)
    }

    /// Every file in OUT_DIR — the state index included, pre-compressed siblings decompressed.
    static func files(_ out: String) throws -> [(String, Data)] {
        let names = try #require(FileManager.default.enumerator(atPath: out)?.allObjects as? [String])
        return try names.compactMap { name in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: out + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else {
                return nil
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: out + "/" + name))
            for kind in Precompressed.allCases where name.hasSuffix(kind.suffix) {
                return (name, Data(try #require(kind.decompress(Array(bytes), limit: 64 << 20))))
            }
            return (name, bytes)
        }
    }

    @Test(
        "without --locations no file in OUT_DIR (the state index included) holds a coordinate or a place; with it, only the chosen precision's point",
        .enabled(if: Processes.tool("exiftool") != nil, "needs exiftool (scripts/bootstrap --test)"))
    func onlyWhenAsked() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (out, manifest) = try await Self.build(root, .none)
            #expect(manifest.items.count == 2 && manifest.items.allSatisfy { $0.place == nil } && manifest.settings.locations == nil)
            let written = try Self.files(out)
            #expect(written.contains { $0.0 == ".thumbframe-state.sqlite" } && written.contains { $0.0.hasSuffix(".json.br") })
            #expect(written.contains { $0.0 == "index.html" })
            for (name, bytes) in written {
                // Images are binary. The viewer's script, inline in index.html, reads a place's
                // `latitude` when there is one: of the page, its first screen's data is read for words.
                let text = !name.hasPrefix("thumbs/")
                let read = name.hasPrefix("index.html") ? Self.firstScreen(bytes) : bytes
                #expect(!read.isEmpty, "\(name)")
                for trace in Self.traces(decimals: 2...5) {
                    #expect(bytes.range(of: Data(trace.utf8)) == nil, "\(name) holds \(trace)")
                }
                for word in text ? Self.words : [] {
                    #expect(read.range(of: Data(word.utf8)) == nil, "\(name) holds \(word)")
                }
            }

            // city: the nearest city's own point, name, region and country.
            let table = PlaceTable.shared
            let (cityOut, cities) = try await Self.build(root, .city)
            for (name, lat, lon) in Self.spots {
                let place = try #require(cities.items.first { $0.path == name }?.place)
                let expected = try #require(table.nearest(latitude: lat, longitude: lon))
                #expect(place.latitude == expected.latitude && place.longitude == expected.longitude && place.name == expected.name)
                #expect(place.cell == nil && place.country == expected.country)
                #expect(PlaceTable.kilometres((lat, lon), (place.latitude, place.longitude)) > 0.5, "not the photo's own point")
            }
            #expect(cities.items.first { $0.path == "ivry.jpg" }?.place?.label.hasSuffix("Ile-de-France, FR") == true)

            // region: the region's centre and names, no city.
            let (regionOut, regions) = try await Self.build(root, .region)
            let bavaria = try #require(regions.items.first { $0.path == "field.jpg" }?.place)
            #expect(bavaria.region == "Bavaria" && bavaria.country == "DE" && bavaria.name == nil)

            // cell:10: the cell's centre; the cell of that centre is itself.
            let (cellOut, cells) = try await Self.build(root, .cell(km: 10))
            for (name, lat, lon) in Self.spots {
                let place = try #require(cells.items.first { $0.path == name }?.place)
                #expect(place == Manifest.Place.cell(latitude: lat, longitude: lon, km: 10) && place.cell?.hasPrefix("10km/") == true)
            }
            // In every file of every build: nothing finer than the chosen place (the photo's
            // position to 3 decimals and more, or as EXIF text), the state index included.
            for output in [cityOut, regionOut, cellOut] {
                for (name, bytes) in try Self.files(output) {
                    for trace in Self.traces(decimals: 3...5) {
                        #expect(bytes.range(of: Data(trace.utf8)) == nil, "\(name) holds \(trace)")
                    }
                }
            }
            let summary = try ManifestFile.open(cityOut + "/manifest.json").document.summary
            #expect(summary.places?.values.reduce(0, +) == 2)
            // show and inspect say them.
            let shown = ManifestQuery.rendered(
                try #require(cities.items.first { $0.path == "ivry.jpg" }), in: try ManifestFile.open(cityOut + "/manifest.json").document,
                viewport: nil)
            #expect(shown.contains("place       ") && shown.contains("Ile-de-France, FR"), "\(shown)")
        }
    }
}
