// swift-tools-version:6.0
import PackageDescription

// uplinkd: per-uplink connectivity verdicts for Linux gateways.
//
// Targets, from the inside out:
//   UplinkCore    pure Swift (no C imports): model, configuration, classification, verdicts.
//   CCurl, CNetlink, CAres   system libraries found by pkg-config.
//   CLinuxShim, CCurlShim, CAresShim   one tiny C shim per library: typed, non-variadic
//                 wrappers for what Swift cannot call directly.
//   UplinkLinux   adapters: netlink, sysfs, libcurl prober, DNS, event loop, processes,
//                 the agent.
//   UplinkMonitor the embedding API (async changes). A target of its own so the
//                 command line does not link Swift Concurrency and Dispatch.
//   uplinkd       the command line.
let package = Package(
    name: "uplinkd",
    products: [
        .library(name: "Uplink", targets: ["UplinkCore", "UplinkLinux", "UplinkMonitor"]),
        .executable(name: "uplinkd", targets: ["uplinkd"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CNetlink",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev"])]
        ),
        .systemLibrary(
            name: "CAres",
            pkgConfig: "libcares",
            providers: [.apt(["libc-ares-dev"])]
        ),
        .target(name: "CLinuxShim"),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        .target(name: "CAresShim", dependencies: ["CAres"]),
        .target(name: "UplinkCore"),
        .target(
            name: "UplinkLinux",
            dependencies: ["UplinkCore", "CCurl", "CNetlink", "CAres", "CLinuxShim", "CCurlShim", "CAresShim"]
        ),
        .target(
            name: "UplinkMonitor",
            dependencies: ["UplinkCore", "UplinkLinux"]
        ),
        .executableTarget(
            name: "uplinkd",
            dependencies: ["UplinkCore", "UplinkLinux"],
            // The Swift driver links Linux executables with -export-dynamic: every public
            // symbol of the core and the adapters would be exported, and so kept by
            // --gc-sections. Nothing loads symbols from this binary (about 170 KiB saved).
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"])]
        ),
        // Builders shared by both test targets; not part of any product.
        .target(name: "UplinkTestSupport", dependencies: ["UplinkCore"], path: "Tests/UplinkTestSupport"),
        .testTarget(name: "UplinkCoreTests", dependencies: ["UplinkCore", "UplinkTestSupport"]),
        .testTarget(name: "UplinkLinuxTests",
                    dependencies: ["UplinkLinux", "UplinkCore", "UplinkMonitor", "UplinkTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
