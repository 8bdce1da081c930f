import Testing
import UplinkCore
import UplinkTestSupport

/// A degraded primary hands over to a healthy backup only while its degradation
/// lasts: the loss figure rests on minutes of attempts, the handover on the last
/// `degraded-for` of them.
@Suite("AgentCore: handing over a degraded primary")
struct DegradedHandoverTests {
    /// eth0 primary and wlan0 backup, both online with a loss figure of their own
    /// (light rounds every 10 s) at 300 s.
    private func settled() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 300_000)
        #expect(driver.core.primary == "eth0")
        #expect(eth0(driver)?.quality.figures.lossPercent == 0)
        return driver
    }

    private func eth0(_ driver: CoreDriver) -> UplinkStatus? {
        driver.core.state(now: driver.instant, pid: 1).uplinks.first { $0.interface == "eth0" }
    }

    private func handovers(_ driver: CoreDriver) -> [HookEvent] {
        driver.hooks.filter { $0.kind == .primary && $0.primaryReason == .degraded }
    }

    @Test func lossThatEndedDoesNotMoveThePrimaryLater() {
        var driver = settled()
        // A third of the first SYNs lost until eth0 reads degraded, then none.
        driver.firstSYNLossPercent["eth0"] = 33
        var second = 300
        while eth0(driver)?.quality.degraded != true && second < 900 {
            second += 1
            driver.advance(to: second * 1_000)
        }
        #expect(eth0(driver)?.quality.degraded == true, "the loss did not degrade eth0: the test shows nothing")
        driver.firstSYNLossPercent["eth0"] = nil
        // Past the time the degradation would last: the loss figure, resting on the
        // last 64 attempts, still holds it, so eth0 still reads degraded.
        driver.advance(to: (second + 70) * 1_000)
        #expect(eth0(driver)?.quality.degraded == true)
        driver.advance(to: (second + 600) * 1_000)
        #expect(handovers(driver).isEmpty)
        #expect(driver.core.primary == "eth0")
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
    }

    @Test func lastingLossStillMovesThePrimary() {
        var driver = settled()
        driver.firstSYNLossPercent["eth0"] = 33
        var degradedAt: Int?
        var movedAt: Int?
        for second in 301...600 {
            driver.advance(to: second * 1_000)
            if degradedAt == nil, eth0(driver)?.quality.degraded == true { degradedAt = second * 1_000 }
            if movedAt == nil, driver.core.primary == "wlan0" { movedAt = second * 1_000 }
        }
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.primary == "wlan0")
        #expect(handovers(driver).count == 1)
        // Not before the degradation had lasted its minute (each seen within a second).
        guard let degradedAt, let movedAt else { return }
        #expect(movedAt - degradedAt >= 59_000)
    }
}
