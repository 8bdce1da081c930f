import Testing
import UplinkCore
import UplinkTestSupport

@Suite("AgentCore: flapping uplinks and second looks")
struct FlapDampingAgentTests {
    /// An ethernet primary and a wifi backup, both online from the start, with a 30 s hold-down.
    private func started() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration { $0.agent.holdDownMilliseconds = 30_000 })
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 3, kind: .wifi)])
        driver.answerAll()
        #expect(driver.core.primary == "eth0")
        return driver
    }

    private func isSuppressed(_ name: InterfaceName, _ driver: CoreDriver) -> Bool? {
        driver.core.state(now: driver.instant, pid: 1).uplinks.first { $0.interface == name }?.quality.suppressed
    }

    @Test func anUplinkThatFlapsTwiceInAMinuteIsKeptFromThePrimaryUntilItsPenaltyDecays() throws {
        var driver = started()
        driver.advance(to: 5_000)
        driver.dead = ["eth0"]
        driver.advance(to: 12_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        #expect(driver.core.primary == "wlan0")
        // One flap passes with the plain hold-down.
        #expect(driver.notes.isEmpty)
        driver.dead = []
        driver.advance(to: 21_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.primary == "wlan0")

        // It drops out again within its hold-down: a proving round catches it.
        driver.dead = ["eth0"]
        driver.advance(to: 28_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        let lastFlap = try #require(driver.hooks.last { $0.kind == .verdict && $0.interface == "eth0" })
        #expect(lastFlap.verdict == .limited)
        let flap = (lastFlap.wallSeconds - at(0).wallSeconds) * 1_000
        #expect(driver.notes.contains { if case .suppressed("eth0", _, _, _) = $0 { true } else { false } }, "\(driver.notes)")
        #expect(isSuppressed("eth0", driver) == true)

        driver.dead = []
        var releasedAt: Int?
        var primaryAt: Int?
        for time in stride(from: 29_000, through: 900_000, by: 1_000) {
            driver.advance(to: time)
            if releasedAt == nil, isSuppressed("eth0", driver) == false { releasedAt = time }
            if primaryAt == nil, driver.core.primary == "eth0" { primaryAt = time }
            if releasedAt == nil, time >= 60_000 {
                // Online, past any hold-down, and still not primary.
                #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
                #expect(driver.core.primary == "wlan0")
            }
        }
        let released = try #require(releasedAt)
        let promoted = try #require(primaryAt)
        // Two flaps about 12 s apart leave a penalty near 1 970, which takes
        // 300 s · log2(1970 / 750) ≈ 418 s to fall below 750 (hook times are whole seconds).
        #expect((flap + 410_000...flap + 427_000).contains(released), "released \(released - flap) ms after the flap")
        // Then the hold-down, counted from the release.
        #expect((released + 29_000...released + 31_000).contains(promoted), "primary \(promoted - released) ms after release")
        #expect(driver.notes.contains { if case .released("eth0", _) = $0 { true } else { false } })
        #expect(driver.primaryChanges == ["eth0", "wlan0", "eth0"])
        #expect(driver.hooks.last { $0.kind == .primary }?.primaryReason == .recovered)
    }

    @Test func aSuppressedUplinkStillBecomesPrimaryWhenNothingElseIsOnline() {
        var driver = started()
        driver.advance(to: 5_000)
        driver.dead = ["eth0"]
        driver.advance(to: 12_000)
        driver.dead = []
        driver.advance(to: 21_000)
        driver.dead = ["eth0"]
        driver.advance(to: 28_000)
        #expect(isSuppressed("eth0", driver) == true)
        driver.dead = ["wlan0"]
        driver.advance(to: 60_000)
        #expect(driver.core.verdict(of: "wlan0")?.verdict == .limited)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(isSuppressed("eth0", driver) == true)
        #expect(driver.core.primary == "eth0")
        #expect(!driver.notes.contains { if case .passedOver = $0 { true } else { false } }, "\(driver.notes)")
    }

    // MARK: second looks

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
