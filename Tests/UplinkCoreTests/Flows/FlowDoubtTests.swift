import Testing
import UplinkCore
import UplinkTestSupport

/// With pinned flows, a doubt on the primary acts on new connections at once, and the
/// round that confirms it may wait for a slow path instead of calling it dead.
@Suite("AgentCore: a doubt moves only new connections")
struct FlowDoubtTests {
    private func settled(pinning: Bool) -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration { $0.flows.pinning = pinning })
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 26_000)
        #expect(driver.core.primary == "eth0")
        return driver
    }

    /// Packets leave eth0 with nothing coming back until its full round starts; the
    /// plan of that round.
    private func alarm(_ driver: inout CoreDriver) -> RoundPlan? {
        driver.now = 28_000
        var rx: UInt64 = 10, tx: UInt64 = 10
        driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
        for step in 1...8 {
            driver.now += 250
            tx += 2
            if step == 1 { rx += 1 }
            for case .startRound(let plan, _) in driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx,
                                                                            now: driver.instant) where plan.interface == "eth0" {
                return plan
            }
        }
        return nil
    }

    @Test func theDoubtSendsNewConnectionsToTheSuccessorWhileTheRoundWaitsForASlowPath() throws {
        var driver = settled(pinning: true)
        #expect(driver.core.flowPlan(now: driver.instant)?.spreadText == "eth0:1")
        let confirming = try #require(alarm(&driver))
        let plan = try #require(driver.core.flowPlan(now: driver.instant))
        #expect(plan.provisional == "eth0")
        #expect(plan.spreadText == "wlan0:1")
        #expect(plan.member("eth0")?.keeping == true)
        #expect(driver.core.state(now: driver.instant, pid: 1).provisional == "eth0")
        #expect(confirming.timeoutMilliseconds >= AgentCore.patientConfirmationFloorMilliseconds)
    }

    @Test func withoutPinningTheConfirmationKeepsItsShortFloor() throws {
        var driver = settled(pinning: false)
        let confirming = try #require(alarm(&driver))
        #expect(confirming.timeoutMilliseconds < AgentCore.exchangeFloorMilliseconds)
        #expect(driver.core.flowPlan(now: driver.instant) == nil)
        #expect(driver.core.state(now: driver.instant, pid: 1).spread == nil)
    }
}
