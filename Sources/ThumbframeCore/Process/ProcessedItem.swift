import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// One processed image, before it is given its place in the manifest.
struct ProcessedItem: Sendable, Equatable {
    var source: SourceFile
    var file: Manifest.FileInfo
    var media: Manifest.Media = .photo
    var image: Manifest.ImageInfo
    var exif: Manifest.ExifInfo?
    var thumbnails: [String: Manifest.Thumbnail]
    var placeholder: Manifest.Placeholder?
    /// Apple's content identifier: a Live Photo's photo and MOV share it.
    var contentIdentifier: String?
    /// The burst the camera (or an Android burst's name) says the photo is a frame of.
    var burst: BurstMark?
    /// What the photo looks like (`--stacks` other than none).
    var likeness: Likeness?
    /// Where it was taken, as coarsely as `--locations` says.
    var place: Manifest.Place?
    /// Thumbnails encoded by this run (the others already existed under their content address).
    var thumbnailsWritten: Int
}

extension ProcessedItem {
    /// When the photo was taken, `YYYY-MM-DDTHH:MM:SS`: the EXIF local time, else the file's
    /// modification time in UTC (what a camera-less image has).
    var captureTime: String {
        exif?.capturedAt ?? String(file.modified.prefix(19))
    }

    /// What the state index keeps of it.
    var stored: StateIndex.StoredItem {
        StateIndex.StoredItem(
            file: file, image: image, exif: exif, thumbnails: thumbnails, placeholder: placeholder,
            media: media == .photo ? nil : media, contentIdentifier: contentIdentifier, burst: burst, likeness: likeness, place: place)
    }

    /// A previous manifest's entry for an unchanged file, taken without opening it, with what the
    /// index knew of it beside (`known`, when of the same bytes).
    init(reusing previous: Manifest.Item, source: SourceFile, contentIdentifier: String?, known: ReusePlan.KnownPlaceholder?) {
        let known = known?.sha256 == previous.file.sha256 ? known : nil
        self.init(
            source: source, file: previous.file, media: previous.media, image: previous.image, exif: previous.exif,
            thumbnails: previous.thumbnails, placeholder: previous.placeholder, contentIdentifier: contentIdentifier,
            burst: known?.burst, likeness: known?.likeness, place: previous.place, thumbnailsWritten: 0)
    }
}

/// What became of one file: an item, or a failure entry. (Not a `Result`: a failure is an
/// ordinary outcome of a batch, not a thrown error.)
enum FileOutcome: Sendable, Equatable {
    case item(ProcessedItem)
    /// An item a decode worker made, as the state index stores it.
    case encoded(StateIndex.EncodedItem, thumbnailsWritten: Int)
    case failed(Manifest.Failure)
}

extension FailureStage {
    init(_ stage: DecodeFailure.Stage) {
        self =
            switch stage {
            case .probe: .probe
            case .decode: .decode
            case .encode: .encode
            }
    }
}
