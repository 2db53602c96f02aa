import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@Suite("ThumbHash")
struct ThumbHashTests {
    static let oracle = Fixtures.packageRoot + "/scripts/test-helpers/thumbhash-oracle.py"
    /// The python3 on PATH: the one scripts/bootstrap installs thumbhash-python into.
    static let available =
        (try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", "import thumbhash.encode"]))
        .map { $0.status == 0 } ?? false

    /// Test pictures: gradients and patches of several aspect ratios, seeded noise, and alpha.
    static func cases() -> [(name: String, width: Int, height: Int, rgba: [UInt8])] {
        var generator = SplitMix64(state: 20_261_123)
        func image(_ w: Int, _ h: Int, _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
            var rgba: [UInt8] = []
            for y in 0..<h {
                for x in 0..<w {
                    let p = pixel(x, y)
                    rgba += [p.0, p.1, p.2, p.3]
                }
            }
            return rgba
        }
        let noise = (0..<(64 * 48)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return [
            ("gradient 100×75", 100, 75, image(100, 75) { x, y in (UInt8(x * 255 / 99), UInt8(y * 255 / 74), 128, 255) }),
            (
                "patches 60×100", 60, 100,
                image(60, 100) { x, y in
                    x < 30 ? (y < 50 ? (200, 40, 40, 255) : (40, 60, 200, 255)) : (y < 50 ? (40, 180, 60, 255) : (230, 200, 60, 255))
                }
            ),
            (
                "noise 64×48", 64, 48,
                image(64, 48) { x, y in
                    let v = noise[y * 64 + x]
                    return (v, UInt8(255 - Int(v)), UInt8((Int(v) * 3) % 256), 255)
                }
            ),
            ("flat 16×16", 16, 16, image(16, 16) { _, _ in (90, 160, 200, 255) }),
            ("long 20×100", 20, 100, image(20, 100) { _, y in (UInt8(y * 2), 100, UInt8(255 - y * 2), 255) }),
            ("alpha 80×80", 80, 80, image(80, 80) { x, y in (UInt8(x * 3), UInt8(y * 3), 90, UInt8(x < 40 ? 0 : 255)) }),
            ("soft alpha 50×30", 50, 30, image(50, 30) { x, _ in (220, 30, 30, UInt8(x * 5)) }),
        ]
    }

    @Test(
        "hashes equal the independent implementation's (thumbhash-python); decodes agree within 1 level",
        .enabled(if: available, "needs Python's thumbhash-python (scripts/bootstrap --test)"))
    func matchesOracle() async throws {
        let cases = Self.cases()
        let hashes = cases.map { ThumbHash.encode(width: $0.width, height: $0.height, rgba: $0.rgba) }
        try await Fixtures.withTemporaryDirectory { root in
            let input = cases.indices.map { index -> [String: Any] in
                [
                    "width": cases[index].width, "height": cases[index].height,
                    "rgba": Data(cases[index].rgba).base64EncodedString(), "hash": Data(hashes[index]).base64EncodedString(),
                ]
            }
            try JSONSerialization.data(withJSONObject: input).write(to: URL(fileURLWithPath: root + "/cases.json"))
            let run = try await Processes.run("/usr/bin/env", ["python3", Self.oracle, root + "/cases.json"])
            #expect(run.status == 0, "\(run.stderr)")
            let answers = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
            #expect(answers.count == cases.count)
            for (index, answer) in answers.enumerated() {
                let name = cases[index].name
                let theirs = Data(base64Encoded: answer["hash"] as? String ?? "").map(Array.init) ?? []
                #expect(hashes[index] == theirs, "\(name): \(hashes[index]) against \(theirs)")
                // The oracle's decoder rounds where a JavaScript Uint8Array truncates: 1 level apart.
                let decoded = try #require(answer["decoded"] as? [String: Any])
                let ours = try #require(ThumbHash.decode(hashes[index]))
                // Sizes agree, except where the image is so long that a side has fewer than 3
                // luminance terms: the reference (JavaScript) takes the aspect ratio from the raw
                // term counts, this oracle from counts raised to 3.
                let sameSize = ours.width == decoded["width"] as? Int && ours.height == decoded["height"] as? Int
                let narrow = min(Int(hashes[index][3] & 7), 7) < 3
                #expect(sameSize || narrow, "\(name) size")
                let pixels = Data(base64Encoded: decoded["rgba"] as? String ?? "").map(Array.init) ?? []
                if sameSize {
                    let worst = zip(pixels, ours.rgba).map { abs(Int($0) - Int($1)) }.max() ?? 0
                    #expect(worst <= 1, "\(name): decodes differ by \(worst)")
                }
            }
        }
    }

    @Test("the hash keeps the picture: average colour, aspect ratio, alpha")
    func roundTrip() throws {
        for (name, width, height, rgba) in Self.cases() where name != "noise 64×48" {
            let hash = ThumbHash.encode(width: width, height: height, rgba: rgba)
            #expect(hash.count <= 25, "\(name): \(hash.count) bytes")
            let decoded = try #require(ThumbHash.decode(hash))
            let ratio = Double(width) / Double(height)
            let decodedRatio = Double(decoded.width) / Double(decoded.height)
            #expect(abs(log(decodedRatio / ratio)) < 0.45, "\(name): aspect \(decodedRatio) for \(ratio)")
            // Mean colour of the opaque pixels within 12 levels.
            func mean(_ pixels: [UInt8]) -> [Double] {
                var sums = [0.0, 0.0, 0.0]
                var weight = 0.0
                for i in stride(from: 0, to: pixels.count, by: 4) {
                    let a = Double(pixels[i + 3]) / 255
                    for c in 0..<3 { sums[c] += Double(pixels[i + c]) * a }
                    weight += a
                }
                return sums.map { $0 / max(weight, 1e-9) }
            }
            let opaque = rgba.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 }
            #expect((hash[2] & 0x80 != 0) == !opaque, "\(name): alpha flag")
            if opaque {
                let expected = mean(rgba)
                let got = mean(decoded.rgba)
                for c in 0..<3 { #expect(abs(expected[c] - got[c]) <= 12, "\(name) channel \(c): \(got[c]) for \(expected[c])") }
            } else {
                // The mean opacity survives (colours under alpha 0 are only the average's).
                func meanAlpha(_ pixels: [UInt8]) -> Double {
                    stride(from: 3, to: pixels.count, by: 4).map { Double(pixels[$0]) }.reduce(0, +) / Double(pixels.count / 4)
                }
                #expect(abs(meanAlpha(rgba) - meanAlpha(decoded.rgba)) <= 16, "\(name): mean alpha")
            }
        }
    }
}
