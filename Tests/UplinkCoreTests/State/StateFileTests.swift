import Testing
import UplinkCore
import UplinkTestSupport

@Suite("State file format")
struct StateFileTests {
    @Test func roundTrip() throws {
        let state = AgentState(primary: "eth0", uplinks: [
            UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: .validated, sinceWallSeconds: 100,
                         ipv4: .online, bytesToday: 2_345, ipv4Reason: .validated, dnsSource: .dhclient),
            UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .captive, reason: .redirect, sinceWallSeconds: 200,
                         ipv4: .captive, ipv6: .limited, bytesToday: 9, budgetBytes: 1_048_576, budgetExhausted: true,
                         portalURL: "http://portal.example/login?a=1", ipv4Reason: .redirect, ipv6Reason: .dnsFailed,
                         dnsSource: .resolvConf, metered: true),
        ], writtenWallSeconds: 300, pid: 4242)
        let named = StateFileFormat.encode(state)
        for line in ["primary eth0", "uplink eth0 kind ethernet", "uplink eth0 ipv6_verdict -", "uplink eth0 dns_source dhclient",
                     "uplink wwan0 portal_url http://portal.example/login?a=1", "uplink wwan0 budget_exhausted yes",
                     "uplink wwan0 budget_bytes 1048576", "uplink wwan0 ipv6_reason dns-failed", "uplink wwan0 metered yes"] {
            #expect(named.contains("\n\(line)\n"), "\(line)")
        }
        #expect(try StateFileFormat.decode(named) == state)
        // Format 1, for readers not yet moved, reads back the same.
        let text = StateFileFormat.encode(state, format: 1)
        #expect(text.contains("\nprimary eth0\n"))
        #expect(text.contains("\nuplink eth0 ethernet online validated 100 online - 2345 - no - validated - dhclient no - - - no 0 no - - - - - - - - - - - - - 0 - - - - - - no - hot\n"))
        #expect(text.contains("\nuplink wwan0 wwan captive redirect 200 captive limited 9 1048576 yes http://portal.example/login?a=1 redirect dns-failed resolv.conf yes - - - no 0 no - - - - - - - - - - - - - 0 - - - - - - no - hot\n"))
        #expect(try StateFileFormat.decode(text) == state)
    }

    @Test func linesWithoutTheLaterColumnsStillRead() throws {
        let decoded = try StateFileFormat.decode("format 1\nuplink eth0 ethernet online validated 100 online - 2345 - no -\n")
        #expect(decoded.uplinks.first?.ipv4 == .online)
        #expect(decoded.uplinks.first?.ipv4Reason == nil)
        #expect(decoded.uplinks.first?.dnsSource == nil)
    }

    @Test func statusJSONGivesEachFamilyItsVerdictAndReason() {
        let state = AgentState(primary: "eth0", uplinks: [
            UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: .validated, sinceWallSeconds: 1,
                         ipv4: .online, ipv6: .limited, ipv4Reason: .validated, ipv6Reason: .timeout, dnsSource: .resolvConf),
        ], writtenWallSeconds: 1, pid: 1)
        let json = state.json.serialized()
        #expect(json.contains(#""families":{"ipv4":{"verdict":"online","reason":"validated"},"ipv6":{"verdict":"limited","reason":"timeout"}}"#))
        #expect(json.contains(#""dns_source":"resolv.conf","dns_per_uplink":false"#))
    }

    @Test func portalURLFromTheNetworkStaysOneField() throws {
        let state = AgentState(primary: nil, uplinks: [
            UplinkStatus(interface: "wlan0", kind: .wifi, verdict: .captive, reason: .redirect, sinceWallSeconds: 1,
                         portalURL: "http://p.example/a b\nuplink evil"),
        ], writtenWallSeconds: 1, pid: 1, stopped: true)
        let text = StateFileFormat.encode(state)
        #expect(text.contains("http://p.example/a%20b%0Auplink%20evil"))
        let decoded = try StateFileFormat.decode(text)
        #expect(decoded.uplinks.count == 1)
        #expect(decoded.primary == nil)
        #expect(decoded.stopped)
    }

    @Test func unknownLinesAreIgnoredAndOtherFormatsRefused() throws {
        let text = "format 1\nfuture-key 7\nprimary -\n"
        #expect(try StateFileFormat.decode(text).uplinks.isEmpty)
        #expect(throws: StateFileFormat.DecodeError.self) { try StateFileFormat.decode("format 3\n") }
        let later = "format 2\nfuture-key 7\nprimary -\nuplink eth0 kind ethernet\nuplink eth0 verdict online\n"
            + "uplink eth0 reason validated\nuplink eth0 since 5\nuplink eth0 future_fact whatever\n"
        #expect(try StateFileFormat.decode(later).uplinks.map(\.verdict) == [.online])
        #expect(throws: StateFileFormat.DecodeError.self) { try StateFileFormat.decode("hello\n") }
    }

    /// Found by the state-file fuzz target: a file without a pid line decoded (pid 0,
    /// unknown) but its re-encoding, `pid 0`, was refused.
    @Test func aFileWithoutAPidLineSurvivesARoundTrip() throws {
        let decoded = try StateFileFormat.decode("format 1\nwritten 1\nuplink wwan0 wwan limited dns-failed 5 limited limited 0 - no -\n")
        #expect(decoded.pid == 0)
        let again = try StateFileFormat.decode(StateFileFormat.encode(decoded))
        #expect(again == decoded)
        #expect(throws: StateFileFormat.DecodeError.self) { try StateFileFormat.decode("format 1\npid -1\n") }
    }

    @Test func writtenTimeAndPidDoNotCountAsAChange() {
        let a = AgentState(primary: "eth0", uplinks: [], writtenWallSeconds: 1, pid: 1)
        var b = a
        b.writtenWallSeconds = 99
        #expect(a.sameContent(as: b))
        b.primary = nil
        #expect(!a.sameContent(as: b))
    }
}

@Suite("uplinkd status: exit status for scripts")
struct StatusExitTests {
    private func state(primary: InterfaceName?, stopped: Bool = false) -> AgentState {
        AgentState(primary: primary, uplinks: [], writtenWallSeconds: 1, pid: 42, stopped: stopped)
    }

    @Test func runningWithAPrimaryIsZero() {
        #expect(state(primary: "eth0").statusExitCode(agentRunning: true) == 0)
    }

    @Test func runningWithoutAPrimaryIsOne() {
        #expect(state(primary: nil).statusExitCode(agentRunning: true) == 1)
    }

    @Test func notRunningIsThreeWhateverTheFileSays() {
        #expect(state(primary: "eth0").statusExitCode(agentRunning: false) == 3)
        #expect(state(primary: "eth0", stopped: true).statusExitCode(agentRunning: true) == 3)
        #expect(state(primary: nil, stopped: true).statusExitCode(agentRunning: false) == 3)
    }
}
