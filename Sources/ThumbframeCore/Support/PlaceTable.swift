import Foundation
import ThumbframeManifest

/// The offline table `--locations city` and `region` look up (`PlaceTable+Data.swift`, made by
/// `scripts/make-places` from GeoNames' cities15000: towns of at least 15 000 people and the
/// capitals and seats of regions GeoNames lists beside them, 41 of which are smaller): never a network
/// lookup. Decoded once per process, on first use (25 629 cities, about 3 MB in memory), into
/// buckets of one degree, so a lookup reads the cities of the few buckets around the point.
struct PlaceTable: Sendable {
    struct City: Sendable {
        var latitude: Double
        var longitude: Double
        var name: String
        var region: String
        var country: String
    }

    private(set) var cities: [City] = []
    /// Cities by bucket (`key`): the indexes into `cities`.
    private var buckets: [Int: [Int32]] = [:]
    /// Each region's centre (`country` + tab + `region`): the mean of its cities' directions.
    private var regions: [String: (latitude: Double, longitude: Double)] = [:]

    /// The table, decoded the first time it is asked for.
    static let shared: PlaceTable = PlaceTable(compressed: compressed) ?? PlaceTable()

    /// No place is called nearest from farther than this (a photo at sea, at a pole).
    static let farthestKilometres = 250.0

    private init() {}

    init?(compressed: String) {
        guard let zipped = Data(base64Encoded: compressed.filter { !$0.isWhitespace }),
            let text = Precompressed.gzip.decompress(Array(zipped), limit: 16 << 20)
        else { return nil }
        var sums: [String: (x: Double, y: Double, z: Double)] = [:]
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 5, let lat = Int(fields[0]), let lon = Int(fields[1]) else { return nil }
            let city = City(
                latitude: Double(lat) / 10_000, longitude: Double(lon) / 10_000, name: String(fields[2]), region: String(fields[3]),
                country: String(fields[4]))
            buckets[Self.key(city.latitude, city.longitude), default: []].append(Int32(cities.count))
            cities.append(city)
            guard !city.region.isEmpty else { continue }
            let (x, y, z) = Self.direction(city.latitude, city.longitude)
            let sum = sums[city.country + "\t" + city.region, default: (0, 0, 0)]
            sums[city.country + "\t" + city.region] = (sum.x + x, sum.y + y, sum.z + z)
        }
        for (key, sum) in sums {
            let length = (sum.x * sum.x + sum.y * sum.y + sum.z * sum.z).squareRoot()
            guard length > 0 else { continue }
            regions[key] = (asin(sum.z / length) * 180 / .pi, atan2(sum.y, sum.x) * 180 / .pi)
        }
    }

    /// The bucket of a point: whole degrees of latitude and longitude.
    private static func key(_ latitude: Double, _ longitude: Double) -> Int {
        let row = Int(latitude.rounded(.down)) + 90
        let column = (Int(longitude.rounded(.down)) + 180 + 360) % 360
        return row * 360 + column
    }

    private static func direction(_ latitude: Double, _ longitude: Double) -> (Double, Double, Double) {
        let (phi, lambda) = (latitude * .pi / 180, longitude * .pi / 180)
        return (cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
    }

    /// Great-circle distance in kilometres.
    static func kilometres(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let (p, q) = (direction(a.0, a.1), direction(b.0, b.1))
        let dot = max(-1, min(1, p.0 * q.0 + p.1 * q.1 + p.2 * q.2))
        return acos(dot) * 6371.0088
    }

    /// The city nearest a point, within `farthestKilometres`; the first in the table's order
    /// (latitude, then longitude) among equally near ones.
    func nearest(latitude: Double, longitude: Double) -> City? {
        var best: (distance: Double, index: Int32)?
        // Rings of buckets outward, until a ring lies farther than the best found: a ring's
        // buckets are at least (ring - 1) degrees away, a degree of longitude being the shorter,
        // 111 km × cos(latitude). The search stops at the farthest a place may be.
        let widen = max(0.1, cos(min(89, abs(latitude)) * .pi / 180))
        let reach = Int((Self.farthestKilometres / (Manifest.Place.kilometresPerDegree * widen)).rounded(.up)) + 1
        for ring in 0...reach {
            if let best, Double(ring - 1) * Manifest.Place.kilometresPerDegree * widen > best.distance { break }
            for dlat in -ring...ring {
                for dlon in -ring...ring where max(abs(dlat), abs(dlon)) == ring {
                    let (lat, lon) = (latitude + Double(dlat), longitude + Double(dlon))
                    guard lat >= -91, lat <= 91 else { continue }
                    for index in buckets[Self.key(lat, lon)] ?? [] {
                        let city = cities[Int(index)]
                        let distance = Self.kilometres((latitude, longitude), (city.latitude, city.longitude))
                        if best == nil || distance < best!.distance || (distance == best!.distance && index < best!.index) {
                            best = (distance, index)
                        }
                    }
                }
            }
        }
        guard let best, best.distance <= Self.farthestKilometres else { return nil }
        return cities[Int(best.index)]
    }

    /// The place `locations` publishes for a point; nil with `none`, or no city near enough.
    func place(latitude: Double, longitude: Double, _ locations: Manifest.Locations) -> Manifest.Place? {
        switch locations {
        case .none:
            return nil
        case .cell(let km):
            return Manifest.Place.cell(latitude: latitude, longitude: longitude, km: km)
        case .city:
            guard let city = nearest(latitude: latitude, longitude: longitude) else { return nil }
            return Manifest.Place(
                latitude: city.latitude, longitude: city.longitude, name: city.name, region: city.region.isEmpty ? nil : city.region,
                country: city.country)
        case .region:
            guard let city = nearest(latitude: latitude, longitude: longitude), !city.region.isEmpty,
                let centre = regions[city.country + "\t" + city.region]
            else { return nil }
            return Manifest.Place(
                latitude: (centre.latitude * 10_000).rounded() / 10_000, longitude: (centre.longitude * 10_000).rounded() / 10_000,
                region: city.region, country: city.country)
        }
    }
}
