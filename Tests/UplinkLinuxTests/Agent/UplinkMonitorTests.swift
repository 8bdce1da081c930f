import Glibc
import Testing
import UplinkCore
import UplinkLinux
import UplinkMonitor

/// The embedding API, exercised without sending a packet: the only uplink is the
/// loopback interface (never probed: it has no usable address), and the probe set is
/// a single loopback URL in case that ever changed.
@Suite("UplinkMonitor")
struct UplinkMonitorTests {
    private func configuration() throws -> Configuration {
        try ConfigurationParser(fileName: "test.conf").parse("""
            [check]
            default-probes = no
            [probe local]
            url = http://127.0.0.1:9/
            [uplinks]
            interfaces = lo
            """)
    }

    @Test func publishesStateAndStopsCleanly() async throws {
        let monitor = UplinkMonitor(configuration: try configuration())
        let changes = monitor.changes
        try monitor.start()
        var iterator = changes.makeAsyncIterator()
        let first = await iterator.next()
        let uplink = try #require(first?.state.uplinks.first)
        #expect(uplink.interface.value == "lo")
        #expect(uplink.verdict == .down)
        #expect(first?.events.first?.kind == .verdict)
        #expect(monitor.current?.uplinks.count == 1)
        #expect(monitor.verdict(for: .other) == .down)
        #expect(!monitor.isConnectedWithoutInternet(via: .other))
        monitor.stop()
        // The sequence ends with the monitor.
        while await iterator.next() != nil {}
    }

    @Test func oneOffCheck() async throws {
        let reports = try await UplinkMonitor.check([try #require(InterfaceName("nosuch9"))], configuration: try configuration())
        #expect(reports.count == 1)
        #expect(reports.first?.assessment == Assessment(.down, reason: .noSuchInterface))
    }
}
