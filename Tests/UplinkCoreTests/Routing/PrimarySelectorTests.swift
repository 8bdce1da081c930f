import Testing
import UplinkCore
import UplinkTestSupport

@Suite("PrimarySelector: priority and hold-down")
struct PrimarySelectorTests {
    private func candidate(_ name: InterfaceName, _ kind: InterfaceKind, _ verdict: Verdict, since: Int = 0) -> PrimarySelector.Candidate {
        PrimarySelector.Candidate(name: name, kind: kind, verdict: verdict, onlineSinceMilliseconds: since)
    }

    @Test func bestOnlineByKindPriority() {
        var selector = PrimarySelector()
        do {
            let result = selector.select(from: [candidate("wwan0", .wwan, .online), candidate("wlan0", .wifi, .online),
                                       candidate("eth0", .ethernet, .limited)], policy: policy(), now: 0)
            #expect(result)
        }
        #expect(selector.primary == "wlan0")
    }

    @Test func noOnlineUplinkMeansNoPrimary() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("eth0", .ethernet, .online)], policy: policy(), now: 0)
        do {
            let result = selector.select(from: [candidate("eth0", .ethernet, .captive)], policy: policy(), now: 1)
            #expect(result)
        }
        #expect(selector.primary == nil)
    }

    @Test func recoveredPreferredUplinkWaitsForHoldDown() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("wlan0", .wifi, .online)], policy: policy(), now: 0)
        #expect(selector.primary == "wlan0")
        let recovered = [candidate("eth0", .ethernet, .online, since: 100_000), candidate("wlan0", .wifi, .online)]
        do {
            let result = selector.select(from: recovered, policy: policy(), now: 100_000)
            #expect(!result)
        }
        #expect(selector.primary == "wlan0")
        #expect(selector.holdDownEndsMilliseconds == 130_000)
        do {
            let result = selector.select(from: recovered, policy: policy(), now: 129_999)
            #expect(!result)
        }
        do {
            let result = selector.select(from: recovered, policy: policy(), now: 130_000)
            #expect(result)
        }
        #expect(selector.primary == "eth0")
    }

    @Test func startUpIsNotARecovery() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("wlan0", .wifi, .online)], policy: policy(), now: 0)
        let firstRound = PrimarySelector.Candidate(name: "eth0", kind: .ethernet, verdict: .online,
                                                   onlineSinceMilliseconds: 300, recovered: false)
        do {
            let result = selector.select(from: [firstRound, candidate("wlan0", .wifi, .online)], policy: policy(), now: 300)
            #expect(result)
        }
        #expect(selector.primary == "eth0")
    }

    @Test func noHoldDownWhenThePrimaryIsLost() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("eth0", .ethernet, .online)], policy: policy(), now: 0)
        // eth0 fails; wwan0 just came online: it takes over at once.
        do {
            let result = selector.select(from: [candidate("eth0", .ethernet, .limited), candidate("wwan0", .wwan, .online, since: 5_000)],
                                policy: policy(), now: 5_000)
            #expect(result)
        }
        #expect(selector.primary == "wwan0")
    }

    @Test func interfaceNamesInPriorityBeatKinds() {
        var selector = PrimarySelector()
        let byName = policy { $0.priority = ["wwan0", "ethernet"] }
        _ = selector.select(from: [candidate("eth0", .ethernet, .online), candidate("wwan0", .wwan, .online)], policy: byName, now: 0)
        #expect(selector.primary == "wwan0")
    }
}
