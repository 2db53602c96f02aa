// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "thumbframe",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "ThumbframeManifest", targets: ["ThumbframeManifest"]),
        .executable(name: "thumbframe", targets: ["thumbframe"]),
    ],
    // The command line is a trait, on by default: an app that depends on the ThumbframeManifest
    // library with `traits: []` resolves and builds nothing else (swift-argument-parser is used
    // only under this trait, so SwiftPM leaves it out; ConsumerPackageTests builds such an app).
    traits: [
        .trait(name: "CommandLine", description: "The thumbframe command and its argument parser."),
        .default(enabledTraits: ["CommandLine"]),
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
        // zlib and Brotli, for the pre-compressed siblings of the manifest and its pages.
        .systemLibrary(
            name: "CCompress",
            pkgConfig: "libbrotlienc",
            providers: [.apt(["zlib1g-dev", "libbrotli-dev"]), .brew(["brotli"])]
        ),
        // The build's state index in OUT_DIR (what a rerun compares against, without parsing JSON).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // FFmpeg's demuxers, decoders and scaler, for videos and the motion of Live and Motion Photos
        // (a GPL build on Debian: see LICENSE). The module map links all four libraries.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libswresample-dev", "libavutil-dev"]), .brew(["ffmpeg"]),
            ]
        ),
        // LibRaw (Debian's 0.20, thread-safe build) for RAW files: the module map links it with the
        // OpenMP and C++ runtimes its pkg-config names in flags SwiftPM drops.
        .systemLibrary(
            name: "CLibRaw",
            pkgConfig: "libraw_r",
            providers: [.apt(["libraw-dev"]), .brew(["libraw"])]
        ),
        // libheif's own API, for what libvips 8.14's HEIF loader does not give: nclx colour (PQ,
        // HLG), the decode at the picture's own bit depth, auxiliary images (gain maps).
        .systemLibrary(
            name: "CHeif",
            pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"]), .brew(["libheif"])]
        ),
        // libjxl's own decoder, for the PQ and HLG pictures libvips 8.14's JPEG XL loader gets wrong.
        .systemLibrary(
            name: "CJxl",
            pkgConfig: "libjxl",
            providers: [.apt(["libjxl-dev"]), .brew(["jpeg-xl"])]
        ),
        // The resampling kernels on plain pixel buffers (SSE2 where there is SSE2): scripts/benchmarks/kernel-speed
        // measures them against libvips' reduceh.
        .target(name: "CThumbframeKernels"),
        // What Swift cannot call in libvips, libexif and FFmpeg: variadic vips_* calls, GObject signals,
        // atomics, libexif's macros, FFmpeg's custom I/O and interrupt callbacks, as fixed-argument
        // functions; and the decode workers' sandbox (libseccomp, Landlock's system calls).
        .target(
            name: "CThumbframeShim", dependencies: ["CVips", "CExif", "CFFmpeg", "CLibRaw", "CHeif", "CJxl", "CThumbframeKernels"],
            cSettings: [.define("THUMBFRAME_IMAGING")],
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("seccomp", .when(platforms: [.linux]))]
        ),
        // The only Swift code that touches libvips, libexif, FFmpeg or the shim: decoders with Swift
        // values in and out (the build checks that no other target imports them: scripts/swiftpm.sh).
        .target(
            name: "ThumbframeImaging",
            dependencies: ["ThumbframeManifest", "CVips", "CExif", "CFFmpeg", "CThumbframeShim", "CThumbframeKernels"],
            cSettings: [.define("THUMBFRAME_IMAGING")]
        ),

        .target(name: "ThumbframeCore", dependencies: ["ThumbframeManifest", "ThumbframeImaging", "CCrypto", "CSQLite", "CCompress"]),
        // scripts/benchmarks/bench-readers: the cost of ManifestReader's lookups, as an app sees it.
        .executableTarget(name: "thumbframe-reader-bench", dependencies: ["ThumbframeManifest"]),
        .executableTarget(
            name: "thumbframe",
            dependencies: [
                "ThumbframeCore", "ThumbframeImaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CommandLine"])),
            ]
        ),

        // The tests' own C: fixed-argument wrappers of libvips calls that make fixtures and measure pixels.
        .target(
            name: "CThumbframeTestShim", dependencies: ["CVips", "CHeif", "CThumbframeShim"], path: "Tests/CThumbframeTestShim",
            cSettings: [.define("THUMBFRAME_IMAGING")]
        ),
        // Images synthesized with libvips for the tests, and the build-and-load helper (the C APIs
        // and ThumbframeCore's package API: no testable imports).
        .target(
            name: "ThumbframeTestSupport",
            dependencies: ["CVips", "CThumbframeShim", "CThumbframeTestShim", "ThumbframeCore", "ThumbframeImaging", "ThumbframeManifest"],
            path: "Tests/ThumbframeTestSupport",
            cSettings: [.define("THUMBFRAME_IMAGING")]
        ),
        .testTarget(name: "ThumbframeManifestTests", dependencies: ["ThumbframeManifest", "ThumbframeTestSupport"]),
        .testTarget(
            name: "ThumbframeCoreTests",
            dependencies: [
                "ThumbframeCore", "ThumbframeImaging", "ThumbframeManifest", "ThumbframeTestSupport", "CVips", "CThumbframeShim",
                "CThumbframeKernels",
                "CThumbframeTestShim",
            ],
            cSettings: [.define("THUMBFRAME_IMAGING")]
        ),
        .testTarget(
            name: "ThumbframeCLITests",
            dependencies: [
                "thumbframe", "ThumbframeCore", "ThumbframeImaging", "ThumbframeManifest", "ThumbframeTestSupport",
                "CThumbframeShim", "CThumbframeTestShim",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CommandLine"])),
            ],
            cSettings: [.define("THUMBFRAME_IMAGING")]
        ),
    ]
)

// Upcoming language features for every Swift target: `any` spelled out for existentials, imports
// internal unless a file says otherwise, and members visible only through the modules a file imports.
for target in package.targets where [.regular, .executable, .test].contains(target.type) && !target.name.hasPrefix("C") {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
