import Foundation

extension Manifest {
    /// How precisely a photo's place is published (`--locations`): not at all (the default), its
    /// nearest city, its region, or a cell of a grid of `km` kilometres. Never the photo's own
    /// coordinates.
    public enum Locations: Hashable, Sendable, Codable, CustomStringConvertible {
        case none
        /// The nearest city of at least 15 000 people (an offline table of GeoNames' cities).
        case city
        /// The first-level region (state, province) of that city.
        case region
        /// A cell of an equal-area grid whose cells are about `km` kilometres a side.
        case cell(km: Int)

        /// The sizes of cell a grid may have, in kilometres.
        public static let cellSizes = 1...1000

        /// `none`, `city`, `region` or `cell:KM`; nil for anything else.
        public init?(_ text: String) {
            switch text {
            case "none": self = .none
            case "city": self = .city
            case "region": self = .region
            default:
                guard text.hasPrefix("cell:"), let km = Int(text.dropFirst(5)), Self.cellSizes.contains(km) else { return nil }
                self = .cell(km: km)
            }
        }

        public var description: String {
            switch self {
            case .none: "none"
            case .city: "city"
            case .region: "region"
            case .cell(let km): "cell:\(km)"
            }
        }

        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let made = Locations(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a locations setting"))
            }
            self = made
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }
    }

    /// Where a photo was taken, as coarsely as `settings.locations` says: a city, a region or a
    /// grid cell, with that place's own point (the city's, the region's centre, the cell's centre)
    /// for a map — never the photo's coordinates.
    public struct Place: Codable, Hashable, Sendable {
        /// The place's point in degrees (WGS 84), 4 decimals.
        public var latitude: Double
        public var longitude: Double
        /// The city (`city`).
        public var name: String?
        /// The first-level region: state, province (`city`, `region`; absent where GeoNames
        /// names none).
        public var region: String?
        /// ISO 3166-1 alpha-2 (`city`, `region`).
        public var country: String?
        /// The grid cell, `<km>km/<row>/<column>` (`cell:KM`).
        public var cell: String?

        /// Creates a place.
        public init(
            latitude: Double, longitude: Double, name: String? = nil, region: String? = nil, country: String? = nil,
            cell: String? = nil
        ) {
            self.latitude = latitude
            self.longitude = longitude
            self.name = name
            self.region = region
            self.country = country
            self.cell = cell
        }

        /// What a list of places says: `Paris, Ile-de-France, FR`, `Texas, US`, or a cell's centre
        /// (`48.8500, 2.3500`).
        public var label: String {
            if cell != nil { return String(format: "%.4f, %.4f", latitude, longitude) }
            return [name, region, country].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: ", ")
        }

        /// The cell of a grid of `km`-kilometre cells holding a point: rows of equal height from
        /// the south pole, each cut into as many columns as its circumference at its centre holds
        /// (so cells keep about the same area), and the cell's centre as its point.
        public static func cell(latitude: Double, longitude: Double, km: Int) -> Place {
            let height = Double(km) / kilometresPerDegree
            let rows = Int((180 / height).rounded(.up))
            let row = min(rows - 1, max(0, Int(((latitude + 90) / height).rounded(.down))))
            let centre = min(90, -90 + (Double(row) + 0.5) * height)
            let columns = max(1, Int((360 * cos(centre * .pi / 180) * kilometresPerDegree / Double(km)).rounded(.down)))
            let width = 360 / Double(columns)
            let column = min(columns - 1, max(0, Int(((longitude + 180) / width).rounded(.down))))
            return Place(
                latitude: rounded(centre), longitude: rounded(-180 + (Double(column) + 0.5) * width), cell: "\(km)km/\(row)/\(column)")
        }

        /// Kilometres in a degree of latitude (and of longitude at the equator).
        public static let kilometresPerDegree = 111.32

        /// To 4 decimals (11 m), as the manifest writes numbers.
        static func rounded(_ degrees: Double) -> Double { (degrees * 10_000).rounded() / 10_000 }
    }
}
