/// The thumbframe version written into manifests.
package enum ThumbframeVersion {
    /// Semantic version of this build of thumbframe.
    package static let current = "0.3.0"
}
