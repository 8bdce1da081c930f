import Testing
import UplinkCore
import UplinkTestSupport

/// The agent core's second looks (`SecondLook`): a full round that failed but showed
/// life is looked at again at the ceilings before a verdict changes.
@Suite("AgentCore: second looks at failed rounds")
struct SecondLookAgentTests {
    /// eth0 alone, online and settled at 20 s.
    private func settled() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 20_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        return driver
    }

    @Test func aRoundBelowTheQuorumWithSomeProbesValidGetsAnotherLookAtTheCeilings() {
        var driver = settled()
        driver.failing["eth0"] = ["firefox", "microsoft", "debian"]
        let fullsBefore = driver.plans(of: "eth0", .full).count
        let verdictHooks = driver.hooks.filter { $0.kind == .verdict }.count
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        let first = driver.plans(of: "eth0", .full).last
        #expect(first.map { $0.timeoutMilliseconds < 5_000 } == true)
        driver.answerAll(limit: 1)
        // Two of five validated: not decided yet, another full round at once.
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.hooks.filter { $0.kind == .verdict }.count == verdictHooks)
        let fulls = driver.plans(of: "eth0", .full)
        #expect(fulls.count == fullsBefore + 2)
        #expect(fulls.last?.timeoutMilliseconds == 5_000)
        #expect(fulls.last?.dnsTimeoutMilliseconds == 3_000)
    }

    @Test func whatValidatedInEitherLookCounts() {
        var driver = settled()
        driver.failing["eth0"] = ["firefox", "microsoft", "debian"]
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        driver.answerAll(limit: 1)
        // The second look gets firefox through, not apple and google: three of five in all.
        driver.failing["eth0"] = ["apple", "google", "microsoft", "debian"]
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.hooks.filter { $0.kind == .verdict }.map(\.verdict) == [.online])
        // Decided: no third look.
        #expect(driver.plans(of: "eth0", .full).count == 3)
    }

    @Test func aLossyUplinkLeavesOnlineOnlyAfterItsLooksAllFail() {
        var driver = settled()
        driver.failing["eth0"] = ["firefox", "microsoft", "debian"]
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        for _ in 0..<SecondLook.maximumLooks {
            driver.answerAll(limit: 1)
            #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        }
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        #expect(driver.plans(of: "eth0", .full).count == 2 + SecondLook.maximumLooks)
    }

    @Test func probesThatConnectAndThenStallGetAnotherLook() {
        var driver = settled()
        driver.dead = ["eth0"]
        driver.stalling = ["eth0"]
        let fullsBefore = driver.plans(of: "eth0", .full).count
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.plans(of: "eth0", .full).count == fullsBefore + 2)
        #expect(driver.plans(of: "eth0", .full).last?.timeoutMilliseconds == 5_000)
    }

    @Test func aLinkChangeForgetsWhatEarlierLooksValidated() {
        var driver = settled()
        driver.failing["eth0"] = ["firefox", "microsoft", "debian"]
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        // The uplink gets a new address before the next look: apple and google
        // validated on the old link and must not count on the new one.
        var moved = usableLink("eth0", index: 2)
        moved.addresses.append(address("10.0.9.2", 24))
        let added = LinkEvent.addressAdded(moved, address("10.0.9.2", 24))
        driver.failing["eth0"] = ["apple", "google", "microsoft", "debian"]
        driver.links([ObservedUplink(facts: moved, kind: .ethernet), uplink("wlan0", index: 3, kind: .wifi)], events: [added])
        driver.answerAll(limit: 5)
        // One of five in every look on the new link.
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
    }

    private func loss(_ name: InterfaceName, _ driver: CoreDriver) -> Int? {
        driver.core.state(now: driver.instant, pid: 1).uplinks.first { $0.interface == name }?.quality.figures.lossPercent
    }

    @Test func anOutageTheUplinkCameThroughIsNotCountedAsLossUntilItsDoubtSettles() {
        // Two failed full rounds to leave online: the first one fails while eth0 is
        // still online. Its probes measure an outage; they count only if eth0 comes
        // through online, and are dropped when it leaves.
        var driver = CoreDriver(CoreDriver.configuration { $0.probing.failuresToLeaveOnline = 2 })
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 600_000)
        #expect(loss("eth0", driver) == 0)
        driver.dead = ["eth0"]
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(loss("eth0", driver) == 0)
        driver.advance(to: driver.now + 5_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        driver.dead = []
        driver.advance(to: driver.now + 120_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(loss("eth0", driver) == 0)
    }

    @Test func aDeadUplinkLeavesOnlineAfterItsFirstFailedFullRound() {
        var driver = settled()
        driver.dead = ["eth0"]
        let fullsBefore = driver.plans(of: "eth0", .full).count
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        // No look at the ceilings: the next round waits for the suspect back-off.
        #expect(driver.plans(of: "eth0", .full).count == fullsBefore + 1)
    }
}
