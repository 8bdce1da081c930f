import Testing
import UplinkCore
import UplinkTestSupport

/// What systemd hears (readiness, the status line) and what hooks get about an
/// uplink's network and the stop.
@Suite("Service status and hook environment")
struct ServiceStatusTests {
    private func uplink(_ name: InterfaceName, _ verdict: Verdict, _ reason: Reason) -> UplinkStatus {
        UplinkStatus(interface: name, kind: .ethernet, verdict: verdict, reason: reason, sinceWallSeconds: 0)
    }

    @Test func settledOnceEveryUplinkHasAVerdict() {
        var state = AgentState(primary: nil, uplinks: [uplink("eth0", .online, .validated), uplink("wwan0", .unknown, .needsProbe)],
                               writtenWallSeconds: 0, pid: 1)
        #expect(!state.isSettled)
        state.uplinks[1] = uplink("wwan0", .limited, .dnsFailed)
        #expect(state.isSettled)
        #expect(AgentState(primary: nil, uplinks: [], writtenWallSeconds: 0, pid: 1).isSettled)
    }

    @Test func summaryLineNamesThePrimaryAndEachVerdict() {
        var degraded = uplink("wlan0", .online, .validated)
        degraded.quality.degraded = true
        let state = AgentState(primary: "eth0", uplinks: [uplink("eth0", .online, .validated), degraded,
                                                          uplink("wwan0", .limited, .dnsFailed)],
                               writtenWallSeconds: 0, pid: 1)
        #expect(state.summaryLine == "primary eth0; eth0 online, wlan0 online degraded, wwan0 limited (dns-failed)")
        #expect(AgentState(primary: nil, uplinks: [], writtenWallSeconds: 0, pid: 1).summaryLine == "no primary; no uplinks")
    }

    @Test func networkEnvironmentPerFamily() {
        var facts = usableLink("eth0", index: 2)
        facts.addresses += [address("2001:db8::2", 64), address("fe80::1", 64)]
        facts.defaultRoutes = [defaultRoute(.ipv4, via: "10.0.2.1", metric: 200), defaultRoute(.ipv4, via: "10.0.2.254", metric: 100),
                               defaultRoute(.ipv6, via: "fe80::ff", metric: 1024)]
        let network = UplinkNetwork(facts: facts, dnsServers: [IPAddress("10.0.2.53")!, IPAddress("2001:db8::53")!])
        let environment = network.environment
        #expect(environment.contains("UPLINK_IPV4_ADDRESSES=10.0.2.2/24"))
        #expect(environment.contains("UPLINK_IPV6_ADDRESSES=2001:db8::2/64"))
        #expect(environment.contains("UPLINK_IPV4_GATEWAY=10.0.2.254"))
        #expect(environment.contains("UPLINK_IPV6_GATEWAY=fe80::ff"))
        #expect(environment.contains("UPLINK_IPV4_DNS=10.0.2.53"))
        #expect(environment.contains("UPLINK_IPV6_DNS=2001:db8::53"))
        #expect(environment.contains("UPLINK_DNS_SERVERS=10.0.2.53 2001:db8::53"))
        #expect(UplinkNetwork().environment.contains("UPLINK_IPV6_GATEWAY="))
    }

    @Test func aStopEventWithoutAPrimaryNamesNoInterface() {
        let core = AgentCore(configuration: Configuration())
        let event = core.stopEvent(now: at(0))
        #expect(event.kind == .stop)
        #expect(event.interface == nil)
        #expect(event.environment.contains("UPLINK_EVENT=stop"))
        #expect(event.environment.contains("UPLINK_INTERFACE="))
        #expect(event.environment.contains("UPLINK_PRIMARY="))
        #expect(event.environment.contains("UPLINK_REASON=stopping"))
    }
}
