import CStartShim
import Glibc

/// What `uplinkd --version` says of the build beside its version, so a package or a
/// bug report tells which toolchain made the binary and what its link did: the
/// compiler, the Swift runtime (static or shared), where argv came from (the start
/// shim or the runtime's own lookup, as the linker settled: start_shim.c) and whether
/// the hot-function order was used (Package.swift's one toolchain choice).
enum BuildDescription {
    static var line: String {
        var facts = [compiler]
        facts.append(dlopen("libswiftCore.so", RTLD_LAZY | RTLD_NOLOAD) == nil ? "static Swift runtime" : "shared Swift runtime")
        // CommandLine.arguments was read before this: whoever answered has.
        facts.append(uplinkd_start_shim_answered() != 0 ? "argv from the start shim" : "argv from the runtime's lookup")
        #if UPLINKD_ORDERED_LINK
        facts.append("hot functions ordered")
        #else
        facts.append("default function order")
        #endif
        return "built with " + facts.joined(separator: ", ")
    }

    private static var compiler: String {
        #if compiler(>=6.3)
        "Swift 6.3 or later"
        #elseif compiler(>=6.2)
        "Swift 6.2"
        #elseif compiler(>=6.1)
        "Swift 6.1"
        #else
        "Swift 6.0"
        #endif
    }
}
