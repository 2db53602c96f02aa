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

    /// Plans thumbnails for an image of `width` × `height` display pixels, the zoom ladder's
    /// renditions (`ladder`) after the recipes'. Never enlarges.
    package init(width: Int, height: Int, recipes: [ThumbnailRecipe], ladder: [ThumbnailRecipe] = []) {
        precondition(width > 0 && height > 0)
        let w = Double(width)
        let h = Double(height)
        func scaled(_ k: Double) -> (Int, Int) {
            (max(1, Int((w * k).rounded())), max(1, Int((h * k).rounded())))
        }
        var largest = 0.0
        outputs = (recipes + ladder).map { recipe in
            let boxW = Double(recipe.width)
            let boxH = Double(recipe.height)
            switch recipe.fit {
            case .fit:
                let k = recipe.fitScale(width: width, height: height)
                largest = max(largest, k)
                let (ow, oh) = recipe.fittedSize(width: width, height: height)
                return Output(recipe: recipe, width: ow, height: oh, crop: nil)
            case .cover:
                let k = min(1, max(boxW / w, boxH / h))
                largest = max(largest, k)
                let (sw, sh) = scaled(k)
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
        (decodeWidth, decodeHeight) = scaled(largest)
        placeholderParent = outputs.prefix(recipes.count).filter { $0.recipe.fit == .fit }.max {
            $0.width * $0.height < $1.width * $1.height
        }
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
