// swift-tools-version:6.0
import PackageDescription

// uplinkd: per-uplink connectivity verdicts for Linux gateways.
//
// Targets, from the inside out:
//   UplinkCore   pure Swift (no C imports): model, configuration, classification, verdicts.
//   CCurl, CNetlink, CAres   system libraries found by pkg-config.
//   CUplinkShim  typed, non-variadic C wrappers for what Swift cannot call directly.
//   UplinkLinux  adapters: netlink, sysfs, libcurl prober, event loop, processes, the agent.
//   UplinkMonitor the embedding API (async changes). A target of its own so the
//                command line does not link Swift Concurrency and Dispatch.
//   uplinkd      the command line.
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
        .target(
            name: "CUplinkShim",
            dependencies: ["CCurl", "CAres"]
        ),
        .target(name: "UplinkCore"),
        .target(
            name: "UplinkLinux",
            dependencies: ["UplinkCore", "CCurl", "CNetlink", "CAres", "CUplinkShim"]
        ),
        .target(
            name: "UplinkMonitor",
            dependencies: ["UplinkCore", "UplinkLinux"]
        ),
        .executableTarget(
            name: "uplinkd",
            dependencies: ["UplinkCore", "UplinkLinux"]
        ),
        .testTarget(name: "UplinkCoreTests", dependencies: ["UplinkCore"]),
        .testTarget(name: "UplinkLinuxTests", dependencies: ["UplinkLinux", "UplinkCore", "UplinkMonitor"]),
    ],
    swiftLanguageModes: [.v5]
)
