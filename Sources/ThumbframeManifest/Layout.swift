import Foundation

/// Which image browser's layout and zoom rules the manifest precomputes.
public enum LayoutPreset: String, Codable, Hashable, Sendable, CaseIterable {
    /// JXPhotoBrowser 3.x (the default): fit to width, long images scroll from the top.
    case jx3
    /// JXPhotoBrowser 4.x: always aspect-fit, zoom up to 3, double tap fills the screen.
    case jx4
    /// PhotoSwipe 5: zoom levels in image pixels per CSS pixel, never above 1 for "fit".
    case photoswipe
    /// thumbframe's own: jx3 geometry, zoom far enough to see every device pixel.
    case pixel
}

/// Where and how big one image is shown in one viewport, and how far it may zoom.
public struct Layout: Codable, Hashable, Sendable {
    /// The image view's frame inside the page at zoom 1, in points.
    public var frame: Manifest.Rect
    /// The scroll view's content size at zoom 1, in points.
    public var contentSize: Size
    /// The largest content offset at zoom 1 (the initial offset is always 0, 0: the top).
    public var maxOffset: Point
    /// True when the image is taller than the screen at full width and scrolls vertically.
    public var long: Bool
    /// Zoom limits.
    public var zoom: Zoom
    /// The item's renditions, smallest first, each with the zoom up to which it is sharp
    /// (`settings.ladder`; absent without one): a frontend shows the first whose `native` is at
    /// least the current zoom, else the last.
    public var ladder: [ZoomLadder.Rung]?

    /// Creates a layout, rounding every number to the manifest's 4 decimals.
    public init(frame: Manifest.Rect, contentSize: Size, maxOffset: Point, long: Bool, zoom: Zoom) {
        self.frame = frame
        self.contentSize = contentSize
        self.maxOffset = maxOffset
        self.long = long
        self.zoom = zoom
    }

    /// A width and height in points.
    public struct Size: Codable, Hashable, Sendable {
        /// Width.
        public var width: Double
        /// Height.
        public var height: Double

        /// Creates a size rounded to 4 decimals.
        public init(width: Double, height: Double) {
            self.width = width.roundedForManifest
            self.height = height.roundedForManifest
        }
    }

    /// An offset in points.
    public struct Point: Codable, Hashable, Sendable {
        /// Horizontal.
        public var x: Double
        /// Vertical.
        public var y: Double

        /// Creates a point rounded to 4 decimals.
        public init(x: Double, y: Double) {
            self.x = x.roundedForManifest
            self.y = y.roundedForManifest
        }
    }

    /// Zoom scales relative to the layout at zoom 1 (PhotoSwipe: image pixels per CSS pixel).
    public struct Zoom: Codable, Hashable, Sendable {
        /// Smallest zoom.
        public var min: Double
        /// Largest zoom.
        public var max: Double
        /// The zoom a double tap goes to.
        public var doubleTap: Double
        /// The zoom at which one image pixel covers one device pixel.
        public var native: Double

        /// Creates zoom limits rounded to 4 decimals.
        public init(min: Double, max: Double, doubleTap: Double, native: Double) {
            self.min = min.roundedForManifest
            self.max = max.roundedForManifest
            self.doubleTap = doubleTap.roundedForManifest
            self.native = native.roundedForManifest
        }
    }
}

/// The layout engine: pure functions of (display size, viewport, preset), so a frontend can run
/// the same numbers at runtime that the manifest holds.
public enum LayoutEngine {
    /// Lays out an image of `width` × `height` display pixels (orientation applied) in `viewport`.
    public static func layout(width: Int, height: Int, viewport: Viewport, preset: LayoutPreset) -> Layout {
        precondition(width > 0 && height > 0, "an image has at least one pixel")
        let w = Double(width)
        let h = Double(height)
        let screenW = viewport.width
        let screenH = viewport.height
        let scale = viewport.scale
        switch preset {
        case .jx3, .pixel:
            // JXPhotoBrowser 3's PhotoBrowserCell.fitSize/fitFrame: an image taller (relative to
            // its width) than the portrait screen is fitted to the width and placed at the top of
            // a vertically scrolling content; any other image is aspect-fitted and centred.
            let long = screenW < screenH && h / w > screenH / screenW
            let k = long ? screenW / w : Swift.min(screenW / w, screenH / h)
            let fitted = Fitted(w: w, h: h, k: k, screenW: screenW, screenH: screenH)
            let native = w / (fitted.width * scale)
            let zoom: Layout.Zoom
            if preset == .jx3 {
                // scrollView.maximumZoomScale = 2; onDoubleTap toggles between 1 and the maximum.
                zoom = Layout.Zoom(min: 1, max: 2, doubleTap: 2, native: native)
            } else {
                // pixel: zoom at least to one image pixel per device pixel; a double tap fills
                // the screen, but at least doubles, and never beyond the maximum.
                let maxZoom = Swift.max(2, native)
                zoom = Layout.Zoom(
                    min: 1, max: maxZoom, doubleTap: Swift.min(maxZoom, Swift.max(2, fitted.fill)), native: native)
            }
            return Layout(
                frame: fitted.frame, contentSize: fitted.size,
                maxOffset: Layout.Point(x: Swift.max(0, fitted.width - screenW), y: Swift.max(0, fitted.height - screenH)),
                long: long, zoom: zoom)
        case .jx4:
            // JXPhotoBrowser 4: always aspect-fit and centred; zoom to 3; a double tap zooms to
            // the scale that fills the screen.
            let fitted = Fitted(w: w, h: h, k: Swift.min(screenW / w, screenH / h), screenW: screenW, screenH: screenH)
            return Layout(
                frame: fitted.frame, contentSize: fitted.size, maxOffset: Layout.Point(x: 0, y: 0), long: false,
                zoom: Layout.Zoom(min: 1, max: 3, doubleTap: fitted.fill, native: w / (fitted.width * scale)))
        case .photoswipe:
            // PhotoSwipe 5's ZoomLevel: "fit" never enlarges; "secondary" (the click/double-tap
            // level) is 3 × fit but at most 1, and at most 4000 image pixels wide; "max" is
            // 4 × fit but at least 1. The image is centred on whole CSS pixels.
            let fit = Swift.min(1, screenW / w, screenH / h)
            let secondary = Swift.min(Swift.min(1, 3 * fit), 4000 / w)
            let maxZoom = Swift.max(fit, secondary, Swift.max(1, 4 * fit))
            let cw = w * fit
            let ch = h * fit
            let frame = Manifest.Rect(
                x: ((screenW - cw) / 2).rounded(), y: ((screenH - ch) / 2).rounded(), width: cw, height: ch)
            return Layout(
                frame: frame, contentSize: Layout.Size(width: cw, height: ch), maxOffset: Layout.Point(x: 0, y: 0),
                long: false, zoom: Layout.Zoom(min: fit, max: maxZoom, doubleTap: secondary, native: 1 / scale))
        }
    }

    /// An image scaled by `k`, centred where it is smaller than the screen.
    private struct Fitted {
        var width: Double
        var height: Double
        var frame: Manifest.Rect
        var size: Layout.Size
        /// The zoom that makes the image fill the screen (cover), relative to this fit.
        var fill: Double

        init(w: Double, h: Double, k: Double, screenW: Double, screenH: Double) {
            width = w * k
            height = h * k
            frame = Manifest.Rect(
                x: Swift.max(0, (screenW - width) / 2), y: Swift.max(0, (screenH - height) / 2), width: width,
                height: height)
            size = Layout.Size(width: width, height: height)
            fill = Swift.max(screenW / width, screenH / height)
        }
    }
}

/// Behaviour a frontend needs besides per-image numbers, per preset.
public struct FrontendConstants: Codable, Hashable, Sendable {
    /// Gap between pages in points (JXPhotoBrowser 3's photoSpacing = 30); for PhotoSwipe a
    /// fraction of the viewport width (its `spacing` option).
    public var pageSpacing: Double
    /// How pulling an image down dismisses the browser, or nil where the preset has no such rule.
    public var dismiss: Dismiss?

    /// JXPhotoBrowser's pan-to-dismiss: while dragging by `ty` points, the image is scaled by
    /// `clamp(1 − ty / H, minScale, 1)` and the background mask's alpha is `scale ^ maskAlphaExponent`
    /// (the article found the square "looks better than linear"); releasing while moving down dismisses.
    public struct Dismiss: Codable, Hashable, Sendable {
        /// Always `pan-scale`.
        public var rule: String
        /// Smallest scale while dragging.
        public var minScale: Double
        /// Mask alpha = scale raised to this.
        public var maskAlphaExponent: Double

        /// Creates a dismiss rule.
        public init(rule: String = "pan-scale", minScale: Double, maskAlphaExponent: Double) {
            self.rule = rule
            self.minScale = minScale
            self.maskAlphaExponent = maskAlphaExponent
        }
    }

    /// Creates constants.
    public init(pageSpacing: Double, dismiss: Dismiss?) {
        self.pageSpacing = pageSpacing
        self.dismiss = dismiss
    }

    /// The constants of a preset.
    public static func of(_ preset: LayoutPreset) -> FrontendConstants {
        switch preset {
        case .jx3, .pixel:
            FrontendConstants(pageSpacing: 30, dismiss: Dismiss(minScale: 0.3, maskAlphaExponent: 2))
        case .jx4:
            FrontendConstants(pageSpacing: 0, dismiss: Dismiss(minScale: 0.3, maskAlphaExponent: 2))
        case .photoswipe:
            // PhotoSwipe's default `spacing: 0.1`; its vertical drag-to-close fades by distance
            // and has no scale rule, so none is given.
            FrontendConstants(pageSpacing: 0.1, dismiss: nil)
        }
    }
}
