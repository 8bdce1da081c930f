// swift-tools-version:6.0
import PackageDescription

// uplinkd: per-uplink connectivity verdicts for Linux gateways.
//
// Targets, from the inside out:
//   UplinkCore    pure Swift (no C imports of its own, no I/O): model, configuration,
//                 classification, verdicts.
//   UplinkPattern the core's body patterns (`expect-regex`): PCRE2 behind one Swift type
//                 with typed errors and fixed bounds of work and memory. PCRE2 is pure
//                 computation (it touches no system state), so the core may depend on
//                 it; a target of its own keeps the C pointers and lifetimes out of
//                 the core's sources.
//   CCurl, CNetlink, CAres, CPCRE2, CSystemd, CMosquitto   system libraries found by
//                 pkg-config (CSystemd: sd-bus's headers, for ModemManager on the system
//                 bus; the library is loaded at the first use, see CSystemdShim;
//                 CMosquitto: libmosquitto, the MQTT push channel).
//   CLinuxShim, CCurlShim, CAresShim, CPCRE2Shim, CSystemdShim, CMosquittoShim   one
//                 tiny C shim per library: typed, non-variadic wrappers for what Swift
//                 cannot call directly (PCRE2's names and constants are macros, and its
//                 bounded search needs a C callout; sd-bus's type codes are character
//                 macros; libmosquitto's callbacks get trampolines).
//   UplinkLinux   adapters: netlink, sysfs, libcurl prober, DNS, ModemManager (sd-bus),
//                 MQTT (libmosquitto), event loop, processes, the agent.
//   UplinkMonitor the embedding API (async changes). A target of its own so the
//                 command line does not link Swift Concurrency and Dispatch.
//   CStartShim    the Swift runtime's argv from the process's start (the command line's
//                 only; see start_shim.c).
//   uplinkd       the command line.

// The link of the executable: what each option is worth, measured, is in
// Tests/bench/README.md ("The link"). No exported dynamic symbols (nothing loads
// symbols from this binary); lld with packed relative relocations (DT_RELR); the
// Swift runtime's C++ from libstdc++.a (packaging/link/libstdc++.so, a linker
// script found first); GCC's unwinder from libgcc_eh.a.
var linkFlags = ["-Xlinker", "--no-export-dynamic", "-use-ld=lld",
                 "-Xclang-linker", "-static-libgcc",
                 "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                 "-L", "\(Context.packageDirectory)/packaging/link"]

// What only one toolchain can do, chosen here and nowhere else (`uplinkd --version`
// names the choice): the hot-function order lists the functions one `check` runs as
// Swift 6.3's runtime and this code name them (profile-hot-functions.py wrote it; the
// gauge in ordering-gauge.py fails a build that keeps less than 90 % of them), so
// other toolchains (Debian's swiftlang 6.0) link in the default order. The start
// shim needs no choice: it is weak, and the runtime's own lookup wins where the shim
// does not fit (start_shim.c).
#if compiler(>=6.3)
let orderedLink = true
linkFlags += ["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/packaging/link/hot-functions.txt",
              "-Xlinker", "--no-warn-symbol-ordering"]
#else
let orderedLink = false
#endif

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
        // Headers only: libsystemd is loaded when the system bus is first opened
        // (CSystemdShim), not linked, so no command pays for it unless it asks
        // ModemManager something.
        .systemLibrary(
            name: "CSystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CPCRE2",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"])]
        ),
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(name: "CLinuxShim"),
        // libssl: OpenSSL (libcurl's TLS backend, loaded with it anyway) set up bare
        // before libcurl when a process makes no TLS connection (curl_shim.c).
        .target(name: "CCurlShim", dependencies: ["CCurl"], linkerSettings: [.linkedLibrary("ssl")]),
        .target(name: "CAresShim", dependencies: ["CAres"]),
        .target(name: "CPCRE2Shim", dependencies: ["CPCRE2"]),
        .target(name: "CSystemdShim", dependencies: ["CSystemd"]),
        .target(name: "CMosquittoShim", dependencies: ["CMosquitto"]),
        .target(name: "UplinkPattern", dependencies: ["CPCRE2Shim"]),
        .target(name: "UplinkCore", dependencies: ["UplinkPattern"]),
        .target(
            name: "UplinkLinux",
            dependencies: ["UplinkCore", "CCurl", "CNetlink", "CAres", "CSystemd", "CMosquitto", "CLinuxShim",
                           "CCurlShim", "CAresShim", "CSystemdShim", "CMosquittoShim"]
        ),
        .target(
            name: "UplinkMonitor",
            dependencies: ["UplinkCore", "UplinkLinux"]
        ),
        // The command line's argv for the static Swift runtime, kept at start instead
        // of found in /proc/self/maps (start_shim.c says why and how).
        .target(name: "CStartShim"),
        .executableTarget(
            name: "uplinkd",
            dependencies: ["UplinkCore", "UplinkLinux", "CStartShim"],
            swiftSettings: orderedLink ? [.define("UPLINKD_ORDERED_LINK")] : [],
            linkerSettings: [.unsafeFlags(linkFlags)]
        ),
        // Builders shared by both test targets; not part of any product.
        .target(name: "UplinkTestSupport", dependencies: ["UplinkCore"], path: "Tests/UplinkTestSupport"),
        .testTarget(name: "UplinkCoreTests", dependencies: ["UplinkCore", "UplinkPattern", "UplinkTestSupport"]),
        .testTarget(name: "UplinkLinuxTests",
                    dependencies: ["UplinkLinux", "UplinkCore", "UplinkMonitor", "UplinkTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
