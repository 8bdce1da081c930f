import Testing
import UplinkCore
import UplinkTestSupport

/// `uplinkd wait-online`'s decision: which states satisfy each mode, and
/// the sentence that says what is still missing.
@Suite("wait-online condition")
struct WaitConditionTests {
    private func uplink(_ name: InterfaceName, _ verdict: Verdict, _ reason: Reason) -> UplinkStatus {
        UplinkStatus(interface: name, kind: .ethernet, verdict: verdict, reason: reason, sinceWallSeconds: 1)
    }

    private func state(primary: InterfaceName? = nil, stopped: Bool = false, _ uplinks: UplinkStatus...) -> AgentState {
        AgentState(primary: primary, uplinks: uplinks, writtenWallSeconds: 1, pid: 4242, stopped: stopped)
    }

    private let eth0Online = UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: .validated,
                                          sinceWallSeconds: 1)

    @Test func noArgumentsWaitsForAPrimary() {
        let condition = WaitCondition(target: .primary)
        #expect(condition.evaluate(state(primary: "eth0", eth0Online), agentRunning: true) == .satisfied)
        let none = state(uplink("eth0", .limited, .dnsFailed), uplink("wwan0", .unknown, .starting))
        #expect(condition.evaluate(none, agentRunning: true)
            == .missing("no primary uplink: eth0 is limited (dns-failed), wwan0 has no verdict yet"))
        // Online but not (yet) chosen: the agent's answer is what counts.
        #expect(condition.evaluate(state(eth0Online), agentRunning: true)
            == .missing("no primary uplink: eth0 is online but not primary yet"))
        #expect(condition.evaluate(state(), agentRunning: true) == .missing("no primary uplink: the agent has no uplinks"))
    }

    @Test func anyWantsOneOnlineUplink() {
        let condition = WaitCondition(target: .anyUplink)
        let one = state(uplink("eth0", .down, .noCarrier), uplink("wwan0", .online, .validated))
        #expect(condition.evaluate(one, agentRunning: true) == .satisfied)
        let none = state(uplink("eth0", .down, .noCarrier), uplink("wlan0", .captive, .redirect))
        #expect(condition.evaluate(none, agentRunning: true)
            == .missing("no uplink online: eth0 is down (no-carrier), wlan0 is captive (redirect)"))
    }

    @Test func namedUplinksMustAllBeOnline() {
        let condition = WaitCondition(target: .uplinks(["eth0", "wwan0"]))
        let both = state(primary: "eth0", eth0Online, uplink("wwan0", .online, .validated), uplink("wlan0", .down, .noCarrier))
        #expect(condition.evaluate(both, agentRunning: true) == .satisfied)
        let half = state(primary: "eth0", eth0Online, uplink("wwan0", .limited, .timeout))
        #expect(condition.evaluate(half, agentRunning: true) == .missing("wwan0 is limited (timeout)"))
        let absent = state(primary: "eth0", eth0Online)
        #expect(condition.evaluate(absent, agentRunning: true) == .missing("wwan0 is not among the agent's uplinks"))
        let neither = state(uplink("eth0", .limited, .dnsFailed), uplink("wwan0", .unknown, .starting))
        #expect(condition.evaluate(neither, agentRunning: true)
            == .missing("eth0 is limited (dns-failed), wwan0 has no verdict yet"))
    }

    @Test func captiveOKAcceptsCaptiveInEveryMode() {
        let portal = state(uplink("wlan0", .captive, .redirect), uplink("eth0", .limited, .timeout))
        for target in [WaitCondition.Target.primary, .anyUplink, .uplinks(["wlan0"])] {
            #expect(WaitCondition(target: target, captiveAccepted: true).evaluate(portal, agentRunning: true) == .satisfied)
            #expect(WaitCondition(target: target).evaluate(portal, agentRunning: true) != .satisfied)
        }
        // Captive is accepted, limited still is not.
        let named = WaitCondition(target: .uplinks(["wlan0", "eth0"]), captiveAccepted: true)
        #expect(named.evaluate(portal, agentRunning: true) == .missing("eth0 is limited (timeout)"))
        #expect(WaitCondition(target: .anyUplink, captiveAccepted: true).evaluate(state(uplink("eth0", .down, .noCarrier)),
                                                                                 agentRunning: true)
            == .missing("no uplink online or captive: eth0 is down (no-carrier)"))
    }

    @Test func staleFactsNeverSatisfy() {
        let online = state(primary: "eth0", eth0Online)
        for target in [WaitCondition.Target.primary, .anyUplink, .uplinks(["eth0"])] {
            let condition = WaitCondition(target: target, captiveAccepted: true)
            #expect(condition.evaluate(online, agentRunning: false)
                == .missing("the agent that wrote the state file (pid 4242) is not running"))
            let stopped = state(primary: "eth0", stopped: true, eth0Online)
            #expect(condition.evaluate(stopped, agentRunning: true)
                == .missing("the agent stopped (pid 4242 wrote its final state)"))
        }
    }

    @Test func aRunningAgentIsOneThatDidNotStopAndWhoseProcessExists() {
        let running = state(primary: "eth0", eth0Online)
        #expect(running.writtenByRunningAgent { $0 == 4242 })
        #expect(!running.writtenByRunningAgent { _ in false })
        #expect(!state(primary: "eth0", stopped: true, eth0Online).writtenByRunningAgent { _ in true })
        var noPid = running
        noPid.pid = 0
        #expect(!noPid.writtenByRunningAgent { _ in true })
    }
}
