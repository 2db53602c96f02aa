package import ThumbframeManifest

/// The geometry of every thumbnail of one image, worked out from its display size alone: the
/// size to decode once (the largest any recipe needs) and each recipe's output and crop.
package struct ThumbnailPlan: Sendable, Equatable {
    /// One recipe's output.
    package struct Output: Sendable, Equatable {
        package var recipe: ThumbnailRecipe
        /// Pixel size of the written thumbnail.
        package var width: Int
        package var height: Int
        /// For cover recipes, the visible part of the displayed image, normalized.
        package var crop: Manifest.Rect?
    }

    /// Box to decode into (display orientation), with shrink-on-load.
    package var decodeWidth: Int
    package var decodeHeight: Int
    package var outputs: [Output]
    /// The largest fit output of the recipes (not of the zoom ladder): the placeholder is
    /// reduced from its pixels, so it does not depend on which renditions an item gets.
    package var placeholderParent: Output?
    /// The display size the plan is for.
    private var displayWidth: Int
    private var displayHeight: Int

    /// Plans thumbnails for an image of `width` × `height` display pixels, the zoom ladder's
    /// renditions (`ladder`) after the recipes'. Never enlarges.
    package init(width: Int, height: Int, recipes: [ThumbnailRecipe], ladder: [ThumbnailRecipe] = []) {
        precondition(width > 0 && height > 0)
        (displayWidth, displayHeight) = (width, height)
        let w = Double(width)
        let h = Double(height)
        var largest = 0.0
        outputs = (recipes + ladder).map { recipe in
            let k = Self.scale(recipe, width: width, height: height)
            largest = max(largest, k)
            switch recipe.fit {
            case .fit:
                let (ow, oh) = recipe.fittedSize(width: width, height: height)
                return Output(recipe: recipe, width: ow, height: oh, crop: nil)
            case .cover:
                let (sw, sh) = Self.box(width: width, height: height, scale: k)
                let ow = min(recipe.width, sw)
                let oh = min(recipe.height, sh)
                // The visible fraction from the exact scale, not the rounded one, so a frontend
                // animating the cell into the full frame lands on the same rectangle.
                let visibleW = min(1, Double(ow) / (w * k))
                let visibleH = min(1, Double(oh) / (h * k))
                let crop = Manifest.Rect(
                    x: (1 - visibleW) / 2, y: (1 - visibleH) / 2, width: visibleW, height: visibleH)
                return Output(recipe: recipe, width: ow, height: oh, crop: crop)
            }
        }
        (decodeWidth, decodeHeight) = Self.box(width: width, height: height, scale: largest)
        placeholderParent = outputs.prefix(recipes.count).filter { $0.recipe.fit == .fit }.max {
            $0.width * $0.height < $1.width * $1.height
        }
    }

    /// A cover recipe's decode box over this many pixels, and over `croppedCoverShare` times the
    /// box of every other output, is not decoded whole: the cover is made from its crop of the
    /// original (`separatingCroppedCovers`).
    package static let croppedCoverPixels = 4_000_000
    package static let croppedCoverShare = 4

    /// The scale a recipe's output is resampled at from an image of `width` × `height` (a
    /// cover's before its crop). Never enlarges.
    private static func scale(_ recipe: ThumbnailRecipe, width: Int, height: Int) -> Double {
        switch recipe.fit {
        case .fit: recipe.fitScale(width: width, height: height)
        case .cover: min(1, max(Double(recipe.width) / Double(width), Double(recipe.height) / Double(height)))
        }
    }

    /// The whole image of `width` × `height` at `scale`, in whole pixels (at least one).
    private static func box(width: Int, height: Int, scale: Double) -> (Int, Int) {
        (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// The pixels of the whole image at `scale`.
    private func boxPixels(_ scale: Double) -> Int {
        let (width, height) = Self.box(width: displayWidth, height: displayHeight, scale: scale)
        return width * height
    }

    /// The plan whose decode box the outputs that show most of the image decide, and the covers
    /// (by index in `outputs`) made from their crop of the original instead: a cover of an image
    /// so long that its scale would make the box over `croppedCoverPixels` and `croppedCoverShare`
    /// times the others' (a 256-pixel square of a 65 535 × 318 panorama needs the whole image at
    /// 52 759 × 256, 21 times the pixels of its 1280-pixel fit, for a crop of 0.5 % of it). Every
    /// other plan comes back as it is, with no covers cropped.
    package func separatingCroppedCovers() -> (plan: ThumbnailPlan, cropped: Set<Int>) {
        let scales = outputs.map { Self.scale($0.recipe, width: displayWidth, height: displayHeight) }
        var cropped = Set<Int>()
        for (index, output) in outputs.enumerated() where output.recipe.fit == .cover {
            let others = scales.enumerated().filter { $0.offset != index }.map(\.element).max() ?? 0
            let pixels = boxPixels(scales[index])
            if pixels > Self.croppedCoverPixels, pixels > Self.croppedCoverShare * boxPixels(others), scales[index] > others {
                cropped.insert(index)
            }
        }
        guard !cropped.isEmpty else { return (self, []) }
        // The box the rest needs; with nothing left, one of `croppedCoverPixels` (the placeholder's source).
        let rest =
            scales.enumerated().filter { !cropped.contains($0.offset) }.map(\.element).max()
            ?? (Double(Self.croppedCoverPixels) / Double(displayWidth * displayHeight)).squareRoot()
        var plan = self
        (plan.decodeWidth, plan.decodeHeight) = Self.box(width: displayWidth, height: displayHeight, scale: rest)
        return (plan, cropped)
    }

    /// A cover's crop in stored pixels of a decode `storedWidth` × `storedHeight` of the image
    /// (turned by `orientation` for display): the centre of the share of each side the output
    /// shows, from the exact scale (the manifest's `crop` is rounded), at least one pixel. A
    /// centred rectangle stays centred under every turn and flip.
    package func storedCrop(
        _ output: Output, storedWidth: Int, storedHeight: Int, orientation: Int
    ) -> (left: Int, top: Int, width: Int, height: Int) {
        let k = Self.scale(output.recipe, width: displayWidth, height: displayHeight)
        let shown = (
            width: min(1, Double(output.width) / (Double(displayWidth) * k)),
            height: min(1, Double(output.height) / (Double(displayHeight) * k))
        )
        let (shareW, shareH) = Orientation.swapsAxes(orientation) ? (shown.height, shown.width) : (shown.width, shown.height)
        let width = min(storedWidth, max(1, Int((Double(storedWidth) * shareW).rounded())))
        let height = min(storedHeight, max(1, Int((Double(storedHeight) * shareH).rounded())))
        return ((storedWidth - width) / 2, (storedHeight - height) / 2, width, height)
    }

    /// The JPEG shrink-on-load factor (1, 2, 4 or 8): the largest that still leaves the decode
    /// at least `margin` times the decode box on both sides (libjpeg scales to ceil(side /
    /// factor)), so a real Lanczos reduction follows the DCT scaling instead of taking its
    /// aliased output as the thumbnail. libvips' thumbnail keeps a margin of 2. `quarterTurn`
    /// when the orientation swaps the stored sides for display.
    package func jpegShrink(storedWidth: Int, storedHeight: Int, quarterTurn: Bool, margin: Double = ThumbnailPlan.jpegMargin) -> Int {
        let needW = Double(quarterTurn ? decodeHeight : decodeWidth) * margin
        let needH = Double(quarterTurn ? decodeWidth : decodeHeight) * margin
        for factor in [8, 4, 2] {
            let width = Double((storedWidth + factor - 1) / factor)
            let height = Double((storedHeight + factor - 1) / factor)
            if width >= needW && height >= needH { return factor }
        }
        return 1
    }

    /// At least this much reduction is left for Lanczos3 after the DCT scaling. With 1 (the
    /// smallest scale that covers) an exact 2× preview was the raw DCT-scaled decode: zone plate
    /// PSNR 21.6 dB against 37.6 dB now (scripts/bench), for about 15 % more cold-build time.
    package static let jpegMargin = 2.0
}
