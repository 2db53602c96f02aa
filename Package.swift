// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "thumbframe",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "ThumbframeManifest", targets: ["ThumbframeManifest"]),
        .executable(name: "thumbframe", targets: ["thumbframe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        // Manifest model, layout engine and index mapping: Foundation only, so a frontend can import it.
        .target(name: "ThumbframeManifest"),

        // The two C libraries, found through pkg-config.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"]), .brew(["vips"])]
        ),
        .systemLibrary(
            name: "CExif",
            pkgConfig: "libexif",
            providers: [.apt(["libexif-dev"]), .brew(["libexif"])]
        ),
        // SHA-256 of every original: OpenSSL's uses the CPU's SHA instructions (3-4x GLib's).
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // The build's state index in OUT_DIR (what a rerun compares against, without parsing JSON).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Fixed-argument wrappers for what Swift cannot call: variadic vips_* calls and libexif macros.
        .target(name: "CThumbframeShim", dependencies: ["CVips", "CExif"]),

        .target(
            name: "ThumbframeCore",
            dependencies: ["ThumbframeManifest", "CVips", "CExif", "CCrypto", "CSQLite", "CThumbframeShim"]
        ),
        .executableTarget(
            name: "thumbframe",
            dependencies: [
                "ThumbframeCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Images synthesized with libvips for the tests, and the build-and-load helper (the C APIs
        // and ThumbframeCore's public API: no testable imports).
        .target(
            name: "ThumbframeTestSupport",
            dependencies: ["CVips", "CThumbframeShim", "ThumbframeCore", "ThumbframeManifest"],
            path: "Tests/ThumbframeTestSupport"
        ),
        .testTarget(name: "ThumbframeManifestTests", dependencies: ["ThumbframeManifest", "ThumbframeTestSupport"]),
        .testTarget(
            name: "ThumbframeCoreTests",
            dependencies: ["ThumbframeCore", "ThumbframeManifest", "ThumbframeTestSupport", "CVips", "CThumbframeShim"]
        ),
        .testTarget(
            name: "ThumbframeCLITests",
            dependencies: [
                "thumbframe", "ThumbframeCore", "ThumbframeManifest", "ThumbframeTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)

// Upcoming language features for every Swift target: `any` spelled out for existentials, imports
// internal unless a file says otherwise, and members visible only through the modules a file imports.
for target in package.targets where [.regular, .executable, .test].contains(target.type) && target.name != "CThumbframeShim" {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
