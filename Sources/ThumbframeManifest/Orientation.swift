/// EXIF orientation (1–8): which of them turn the picture a quarter, so that its display width
/// is its stored height. The one place this rule is written.
public enum Orientation {
    /// True for 5–8 (transpose, rotate 90° clockwise, transverse, rotate 270°).
    public static func swapsAxes(_ orientation: Int) -> Bool { (5...8).contains(orientation) }

    /// The display size of `width` × `height` stored pixels under `orientation`.
    public static func display(width: Int, height: Int, orientation: Int) -> (width: Int, height: Int) {
        swapsAxes(orientation) ? (height, width) : (width, height)
    }
}
