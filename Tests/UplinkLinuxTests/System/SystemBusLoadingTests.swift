import CSystemd
import Glibc
import Testing

/// libsystemd is not linked: the sd-bus shim loads it when the system bus is first
/// opened, with every function uplinkd calls, or fails that open with -ELIBACC.
@Suite("sd-bus loaded at first use")
struct SystemBusLoadingTests {
    @Test func openingTheSystemBusLoadsLibsystemdWithEveryFunction() {
        var bus: OpaquePointer?
        let code = sd_bus_open_system(&bus)
        // Any other answer comes from libsystemd itself (no system bus in a
        // container: -ENOENT), so it was loaded and every function resolved.
        #expect(code != -ELIBACC)
        if code >= 0, let bus { _ = sd_bus_flush_close_unref(bus) }
        #expect(dlopen("libsystemd.so.0", RTLD_NOW | RTLD_NOLOAD) != nil)
    }
}
