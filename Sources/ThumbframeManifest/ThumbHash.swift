import Foundation

/// ThumbHash (Evan Wallace, 2023): a picture of about 25 bytes that a frontend paints while the
/// real thumbnail loads — average colour, aspect ratio, a few DCT terms of luminance, two
/// chroma channels and alpha. Written from the published algorithm; the encoder is what the
/// build runs on each image's pixels, the decoder what an app (iOS, or any Swift) runs to paint
/// a placeholder from the manifest's `placeholder.thumbhash` without any image library.
public enum ThumbHash {
    /// Encodes 8-bit RGBA pixels (row-major, `width × height × 4` bytes, at most 100 × 100).
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8] {
        precondition(w >= 1 && h >= 1 && w <= 100 && h <= 100 && rgba.count == w * h * 4)
        var average = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
        for i in 0..<w * h {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            average.r += alpha / 255 * Double(rgba[i * 4])
            average.g += alpha / 255 * Double(rgba[i * 4 + 1])
            average.b += alpha / 255 * Double(rgba[i * 4 + 2])
            average.a += alpha
        }
        if average.a > 0 {
            average.r /= average.a
            average.g /= average.a
            average.b /= average.a
        }
        let hasAlpha = average.a < Double(w * h)
        let lLimit = hasAlpha ? 5.0 : 7.0
        let longest = Double(max(w, h))
        let lx = max(1, jsRound(lLimit * Double(w) / longest))
        let ly = max(1, jsRound(lLimit * Double(h) / longest))

        // RGBA to LPQA, composited over the average colour.
        var l = [Double](repeating: 0, count: w * h)
        var p = l
        var q = l
        var a = l
        for i in 0..<w * h {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let r = average.r * (1 - alpha) + alpha / 255 * Double(rgba[i * 4])
            let g = average.g * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 1])
            let b = average.b * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        /// DC and normalized AC terms of one channel, in the hash's triangular order.
        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0
            var ac: [Double] = []
            var scale = 0.0
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    var f = 0.0
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lChannel = encodeChannel(l, max(3, lx), max(3, ly))
        let pChannel = encodeChannel(p, 3, 3)
        let qChannel = encodeChannel(q, 3, 3)
        let aChannel = hasAlpha ? encodeChannel(a, 5, 5) : (dc: 1, ac: [], scale: 1)

        let isLandscape = w > h
        let header24 =
            jsRound(63 * lChannel.dc) | jsRound(31.5 + 31.5 * pChannel.dc) << 6
            | jsRound(31.5 + 31.5 * qChannel.dc) << 12 | jsRound(31 * lChannel.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | jsRound(63 * pChannel.scale) << 3 | jsRound(63 * qChannel.scale) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16 & 255),
            UInt8(header16 & 255), UInt8(header16 >> 8 & 255),
        ]
        if hasAlpha { hash.append(UInt8(jsRound(15 * aChannel.dc) | jsRound(15 * aChannel.scale) << 4)) }
        var odd = false
        for channel in hasAlpha ? [lChannel.ac, pChannel.ac, qChannel.ac, aChannel.ac] : [lChannel.ac, pChannel.ac, qChannel.ac] {
            for f in channel {
                let nibble = UInt8(jsRound(15 * f))
                if odd { hash[hash.count - 1] |= nibble << 4 } else { hash.append(nibble) }
                odd.toggle()
            }
        }
        return hash
    }

    /// The picture a hash stands for, at most 32 px on its long side, as 8-bit RGBA.
    public static func decode(_ hash: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard hash.count >= 5 else { return nil }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double(header24 >> 6 & 63) / 31.5 - 1
        let qDC = Double(header24 >> 12 & 63) / 31.5 - 1
        let lScale = Double(header24 >> 18 & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double(header16 >> 3 & 63) / 63
        let qScale = Double(header16 >> 9 & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        guard !hasAlpha || hash.count >= 6 else { return nil }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0

        var acIndex = 0
        let acStart = hasAlpha ? 6 : 5
        var truncated = false
        /// AC terms of one channel (saturation of P and Q boosted 1.25× against quantization).
        func decodeChannel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let at = acStart + acIndex >> 1
                    guard at < hash.count else {
                        truncated = true
                        return ac
                    }
                    let nibble = Int(hash[at]) >> ((acIndex & 1) << 2) & 15
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    acIndex += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = decodeChannel(lx, ly, lScale)
        let pAC = decodeChannel(3, 3, pScale * 1.25)
        let qAC = decodeChannel(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? decodeChannel(5, 5, aScale) : []
        guard !truncated else { return nil }

        let ratio = aspectRatio(hash) ?? 1
        let w = jsRound(ratio > 1 ? 32 : 32 * ratio)
        let h = jsRound(ratio > 1 ? 32 / ratio : 32)
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        let n = max(lx, ly, hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: n)
        var fy = [Double](repeating: 0, count: n)
        for y in 0..<h {
            for x in 0..<w {
                var l = lDC
                var p = pDC
                var q = qDC
                var a = aDC
                for c in 0..<n {
                    fx[c] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(c))
                    fy[c] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(c))
                }
                var j = 0
                for cy in 0..<ly {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx * ly < lx * (ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        j += 1
                        cx += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx < 3 - cy {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                        cx += 1
                    }
                }
                if hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        var cx = cy > 0 ? 0 : 1
                        let fy2 = fy[cy] * 2
                        while cx < 5 - cy {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                            cx += 1
                        }
                    }
                }
                let b = l - 2.0 / 3.0 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let i = (y * w + x) * 4
                for (offset, value) in [r, g, b, a].enumerated() {
                    rgba[i + offset] = UInt8(max(0, 255 * min(1, value)))  // truncates, as a Uint8Array does
                }
            }
        }
        return (w, h, rgba)
    }

    /// Width ÷ height of the image a hash was made from, approximately (from its term counts).
    public static func aspectRatio(_ hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let header = Int(hash[3])
        let hasAlpha = hash[2] & 0x80 != 0
        let isLandscape = hash[4] & 0x80 != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : header & 7
        let ly = isLandscape ? header & 7 : (hasAlpha ? 5 : 7)
        guard lx > 0, ly > 0 else { return nil }
        return Double(lx) / Double(ly)
    }

    /// JavaScript's Math.round (halves up), which the reference implementation uses.
    static func jsRound(_ value: Double) -> Int {
        Int((value + 0.5).rounded(.down))
    }
}
