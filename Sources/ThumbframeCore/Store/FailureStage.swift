/// Where a file failed, as written in `failures[].stage`.
enum FailureStage: String {
    case read, probe, decode, encode, write

    /// Whether an unchanged file that failed at this stage is tried again by the next build. A
    /// file libvips cannot probe or decode stays broken until it changes; reading, encoding or
    /// writing can fail for a moment (a permission, memory, a full disk) and is worth another try.
    var isRetried: Bool {
        switch self {
        case .probe, .decode: false
        case .read, .encode, .write: true
        }
    }
}
