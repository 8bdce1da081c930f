import Testing
import UplinkCore
import UplinkTestSupport

@Suite("AgentCore: verify before promoting")
struct FailoverTests {
    /// eth0 primary, wlan0 and wwan0 online backups that came 3 s later (so their
    /// light rounds fall 3 s after eth0's), all settled, at 26 s.
    private func settled() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 3_000)
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi),
                      uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        driver.advance(to: 26_000)
        #expect(driver.core.primary == "eth0")
        return driver
    }

    @Test func aStaleBackupIsVerifiedThenPromoted() {
        var driver = settled()
        driver.dead = ["eth0"]
        driver.advance(to: 31_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        #expect(driver.core.primary == "wlan0")
        #expect(driver.plans(of: "wlan0", .verify).count == 1)
        #expect(driver.primaryChanges == ["eth0", "wlan0"])
    }

    @Test func aDeadBackupIsSkippedForTheNext() {
        var driver = settled()
        // wlan0's upstream died quietly: its verdict is a stale `online`.
        driver.dead = ["eth0", "wlan0"]
        driver.advance(to: 30_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        #expect(driver.core.primary == "wwan0")
        #expect(driver.plans(of: "wlan0", .verify).count == 1)
        #expect(driver.plans(of: "wwan0", .verify).count == 1)
        #expect(!driver.primaryChanges.contains("wlan0"))
        #expect(driver.primaryChanges == ["eth0", "wwan0"])
    }

    @Test func theSuccessorIsVerifiedWhileThePrimaryIsConfirmed() {
        var driver = settled()
        driver.dead = ["eth0"]
        driver.now = 28_000
        // A passive alarm on eth0 (before its next light round at 30 s): its full round
        // and the verification of wlan0 (validated 5 s ago) start together.
        var rx: UInt64 = 10, tx: UInt64 = 10
        driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
        var started: [RoundPlan] = []
        for step in 1...8 where started.isEmpty {
            driver.now += 250
            tx += 2
            if step == 1 { rx += 1 }
            for case .startRound(let plan, _) in driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx,
                                                                            now: driver.instant) {
                started.append(plan)
            }
        }
        #expect(Set(started.map(\.interface)) == ["eth0", "wlan0"])
        #expect(started.first { $0.interface == "wlan0" }?.purpose == .verify)
        #expect(started.first { $0.interface == "eth0" }?.purpose == .full)
    }

    @Test func aFreshBackupTakesOverAtOnce() {
        var driver = settled()
        // wlan0 validated 1 s ago: carrier loss on eth0 hands over without a probe.
        driver.advance(to: 33_500)
        driver.now = 34_000
        driver.links([uplink("eth0", index: 2, kind: .ethernet, carrier: false), uplink("wlan0", index: 4, kind: .wifi),
                      uplink("wwan0", index: 3, kind: .wwan)],
                     events: [.carrierChanged(usableLink("eth0", index: 2, carrier: false))])
        #expect(driver.core.primary == "wlan0")
        #expect(driver.plans(of: "wlan0", .verify).isEmpty)
    }

    @Test func carrierLossVerifiesAStaleBackupFirst() {
        var driver = settled()
        driver.now = 29_000
        driver.links([uplink("eth0", index: 2, kind: .ethernet, carrier: false), uplink("wlan0", index: 4, kind: .wifi),
                      uplink("wwan0", index: 3, kind: .wwan)],
                     events: [.carrierChanged(usableLink("eth0", index: 2, carrier: false))])
        #expect(driver.core.verdict(of: "eth0")?.verdict == .down)
        // The old choice stands until wlan0 answers (one primary change, not two).
        #expect(driver.core.primary == "eth0")
        #expect(driver.plans(of: "wlan0").last?.purpose == .verify)
        driver.answerAll()
        #expect(driver.core.primary == "wlan0")
        #expect(driver.primaryChanges == ["eth0", "wlan0"])
    }

    @Test func noBackupLeftMeansNoPrimary() {
        var driver = settled()
        driver.dead = ["eth0", "wlan0", "wwan0"]
        driver.advance(to: 40_000)
        #expect(driver.core.primary == nil)
        #expect(driver.primaryChanges == ["eth0", nil])
    }
}
