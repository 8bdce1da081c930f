import Glibc
import Testing
import UplinkCore
import UplinkTestSupport
@testable import UplinkLinux

/// `MetricsExporter`: when the textfile is written, moved and removed.
@Suite("Metrics exporter")
struct MetricsExporterTests {
    private func directory() throws -> String {
        var template = Array("/tmp/uplinkd-metrics-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: try #require(made))
    }

    private func read(_ path: String) -> String? {
        guard let bytes = try? SmallFile.readAll(path, limit: 1 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func state(_ verdict: Verdict, written: Int) -> AgentState {
        AgentState(primary: verdict == .online ? "eth0" : nil, uplinks: [
            UplinkStatus(interface: "eth0", kind: .ethernet, verdict: verdict, reason: .validated, sinceWallSeconds: 10),
        ], writtenWallSeconds: written, pid: 1)
    }

    private func verdictEvent() -> HookEvent {
        HookEvent(kind: .verdict, interface: "eth0", interfaceKind: .ethernet, verdict: .down, previousVerdict: .online,
                  reason: .noCarrier, portalURL: nil, primary: nil, previousPrimary: "eth0", wallSeconds: 20)
    }

    @Test func writesOnChangeOnlyAndMovesWithThePath() throws {
        let dir = try directory()
        let first = dir + "/a/uplinkd.prom", second = dir + "/uplinkd.prom"
        let exporter = MetricsExporter()
        exporter.publish(state(.online, written: 100), events: [], probeBytes: ["eth0": 10], to: first)
        #expect(read(first)?.contains("uplinkd_uplink_up{interface=\"eth0\",kind=\"ethernet\"} 1\n") == true)
        // Nothing it shows changed but the time: the file stays as it was.
        exporter.publish(state(.online, written: 200), events: [], probeBytes: ["eth0": 10], to: first)
        #expect(read(first)?.contains("uplinkd_state_written_timestamp_seconds 100\n") == true)
        // Probe bytes alone are written at most once a minute (the file may be on flash).
        exporter.publish(state(.online, written: 300), events: [], probeBytes: ["eth0": 20], nowMilliseconds: 30_000, to: first)
        #expect(read(first)?.contains("uplinkd_probe_bytes_total{interface=\"eth0\",kind=\"ethernet\"} 10\n") == true)
        exporter.publish(state(.online, written: 300), events: [], probeBytes: ["eth0": 20], nowMilliseconds: 60_000, to: first)
        #expect(read(first)?.contains("uplinkd_probe_bytes_total{interface=\"eth0\",kind=\"ethernet\"} 20\n") == true)
        exporter.publish(state(.down, written: 400), events: [verdictEvent()], probeBytes: ["eth0": 20], to: first)
        #expect(read(first)?.contains("uplinkd_verdict_changes_total{interface=\"eth0\",kind=\"ethernet\"} 1\n") == true)
        // A new path (a reload): written there at once, the old file removed.
        exporter.publish(state(.down, written: 500), events: [], probeBytes: ["eth0": 20], to: second)
        #expect(read(first) == nil)
        #expect(read(second)?.contains("uplinkd_verdict_changes_total{interface=\"eth0\",kind=\"ethernet\"} 1\n") == true)
        // Export turned off: no file left to be exported stale.
        exporter.publish(state(.down, written: 600), events: [], probeBytes: ["eth0": 20], to: nil)
        #expect(read(second) == nil)
        rmdir(dir + "/a")
        rmdir(dir)
    }

    @Test func aPathThatCannotBeWrittenIsSurvivedAndRetried() throws {
        let dir = try directory()
        let blocker = dir + "/file"
        let fd = open(blocker, O_WRONLY | O_CREAT, 0o644)
        close(fd)
        let exporter = MetricsExporter()
        exporter.publish(state(.online, written: 100), events: [], probeBytes: [:], to: blocker + "/uplinkd.prom")
        exporter.publish(state(.down, written: 200), events: [], probeBytes: [:], to: blocker + "/uplinkd.prom")
        // The blocker gone, the next change gets through.
        unlink(blocker)
        exporter.publish(state(.online, written: 300), events: [], probeBytes: [:], to: blocker + "/uplinkd.prom")
        #expect(read(blocker + "/uplinkd.prom")?.contains("uplinkd_uplink_up{interface=\"eth0\",kind=\"ethernet\"} 1\n") == true)
        unlink(blocker + "/uplinkd.prom")
        rmdir(blocker)
        rmdir(dir)
    }
}
