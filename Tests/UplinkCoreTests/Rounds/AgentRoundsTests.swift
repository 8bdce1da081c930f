import Testing
import UplinkCore
import UplinkTestSupport

@Suite("AgentCore: light rounds, doubt and the cost of watching")
struct AgentRoundsTests {
    @Test func steadyRoundsAreLightAndRotateThroughTheSet() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        #expect(driver.plans(of: "eth0").first?.purpose == .full)
        #expect(driver.plans(of: "eth0").first?.probes.count == 5)
        driver.advance(to: 60_000)
        let light = driver.plans(of: "eth0", .light)
        #expect(light.count == 6)  // every 10 s, the unmetered default
        #expect(light.allSatisfy { $0.probes(for: .ipv4).count == 1 })
        #expect(light.prefix(5).map { $0.probes(for: .ipv4)[0].name } == ["apple", "google", "firefox", "microsoft", "debian"])
        #expect(driver.plans(of: "eth0", .full).count == 1)
    }

    @Test func aMeteredBackupIsProbedOnItsOwnSlowInterval() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        driver.advance(to: 3_600_000)
        #expect(driver.core.isMetered("wwan0") == true)
        #expect(driver.plans(of: "wwan0", .light).count == 3)   // one every 20 min
        #expect(driver.plans(of: "eth0", .light).count == 360)  // one every 10 s
        #expect(driver.core.state(now: driver.instant, pid: 1).uplinks.first { $0.interface == "wwan0" }?.metered == true)
    }

    @Test func aLightFailureStartsAFullRoundAndOneBlockedEndpointNeverFailsOver() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        driver.failing["eth0"] = ["google"]
        driver.advance(to: 120_000)
        // The light round that hit google failed; the full round's quorum held eth0.
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.primary == "eth0")
        #expect(driver.primaryChanges == ["eth0"])
        // After that full round google is sidelined: light rounds no longer hit it.
        let fulls = driver.plans(of: "eth0", .full)
        #expect(fulls.count == 2)
        let afterFull = driver.plans(of: "eth0", .light).suffix(5)
        #expect(!afterFull.contains { $0.probes(for: .ipv4)[0].name == "google" })
    }

    @Test func lightRoundsReuseDNSAnswersWithinTheirTTLAndFullRoundsResolveAgain() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        #expect(driver.plans(of: "eth0").first?.cachedAnswers.isEmpty == true)
        driver.advance(to: 30_000)
        let light = driver.plans(of: "eth0", .light)
        #expect(light.count == 3)
        // The full round resolved all five names; light rounds pin them.
        #expect(light.allSatisfy { $0.cachedAnswers.count == 5 })
        // Past the TTL (300 s) the names are resolved again.
        driver.advance(to: 301_000)
        #expect(driver.plans(of: "eth0", .light).last?.cachedAnswers.count ?? 0 < 5)
        // A failure forgets them: the full round resolves everything.
        driver.dead = ["eth0"]
        driver.advance(to: 311_000)
        #expect(driver.plans(of: "eth0", .full).last?.cachedAnswers.isEmpty == true)
    }

    @Test func roundsOnAnOnlineUplinkUseItsMeasuredRoundTripNotTheCeiling() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        // The first round knows nothing: the configured ceilings.
        #expect(driver.plans(of: "eth0").first?.timeoutMilliseconds == 5_000)
        #expect(driver.plans(of: "eth0").first?.dnsTimeoutMilliseconds == 3_000)
        driver.advance(to: 10_000)
        #expect(driver.plans(of: "eth0", .light).first?.timeoutMilliseconds == AgentCore.exchangeFloorMilliseconds)
        #expect(driver.plans(of: "eth0", .light).first?.dnsTimeoutMilliseconds == AgentCore.lookupFloorMilliseconds)
        // A slow link (1.3 s per exchange) keeps what it needs.
        var slow = CoreDriver(CoreDriver.configuration())
        slow.exchangeMilliseconds = 1_300
        slow.links([uplink("eth0", index: 2, kind: .ethernet)])
        slow.answerAll()
        slow.advance(to: 10_000)
        #expect(slow.plans(of: "eth0", .light).first.map { $0.timeoutMilliseconds > 2_600 } == true)
        #expect(slow.plans(of: "eth0", .light).first.map { $0.timeoutMilliseconds <= 5_000 } == true)
    }

    @Test func aPassiveStallStartsAFullRoundAtOnceAndAnsweredTrafficSkipsLightRounds() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        #expect(driver.core.trafficSampling()?.interface == "eth0")
        var rx: UInt64 = 100, tx: UInt64 = 100
        // Traffic flows and is answered for 30 s: one light probe instead of three
        // (answered traffic postpones at most two in a row).
        for step in 1...120 {
            driver.now = step * 250
            rx += 10; tx += 10
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
            driver.take(driver.core.tick(now: driver.instant))
            driver.answerAll()
        }
        #expect(driver.plans(of: "eth0", .light).count == 1)
        // The upstream dies: packets leave, nothing comes back.
        let cut = driver.now
        driver.dead = ["eth0"]
        var alarmedAt: Int?
        for step in 1...12 {
            driver.now = cut + step * 250
            tx += 3
            let actions = driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant)
            if alarmedAt == nil, actions.contains(where: { if case .startRound = $0 { return true } else { return false } }) {
                alarmedAt = driver.now - cut
            }
            driver.take(actions)
            driver.answerAll()
        }
        // Busy and with round trips of a millisecond: the quick rule (four packets
        // unanswered for 300 ms) raises it within a sample or two of 300 ms (a sample
        // right after one of the agent's own rounds is excused), not at 1.5 s.
        #expect(alarmedAt.map { (500...750).contains($0) } == true)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
    }

    @Test func oneWayTrafficFalseAlarmsArePaused() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        var tx: UInt64 = 0
        // A UDP stream leaves, nothing comes back, yet the internet works.
        for step in 1...(4 * 60) {
            driver.now = step * 250
            tx += 5
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: 0, transmittedPackets: tx, now: driver.instant))
            driver.take(driver.core.tick(now: driver.instant))
            driver.answerAll()
        }
        // Without the pause there would be one full round every 1.5 s (40 in a minute).
        let alarms = driver.plans(of: "eth0", .full).count - 1
        #expect(alarms >= 1)
        #expect(alarms <= 4)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
    }

    @Test func aSpentBudgetStopsLightRoundsButNotDoubt() {
        var driver = CoreDriver(CoreDriver.configuration { $0.kinds[.wwan] = { var layer = ProbingOverrides(); layer.dailyBudget = .value(2_000); return layer }() })
        driver.links([uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        driver.advance(to: 2 * 3_600_000)
        // The first full round (6 KB) spent the day's 2 KB: no light round since.
        #expect(driver.plans(of: "wwan0").count == 1)
        #expect(driver.core.state(now: driver.instant, pid: 1).uplinks.first?.budgetExhausted == true)
        // Doubt still probes (after a portal hook, a link event, a passive alarm).
        driver.take(driver.core.probeNow("wwan0", now: driver.instant))
        #expect(driver.plans(of: "wwan0").last?.purpose == .full)
        #expect(driver.plans(of: "wwan0").count == 2)
    }

    @Test func aReloadWithAShorterIntervalTakesEffectAtOnce() {
        // Its own interval, not the cadence it has as the primary.
        var driver = CoreDriver(CoreDriver.configuration { $0.probing.metering.primaryInterval = .off })
        driver.links([uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        #expect(driver.core.nextWakeMilliseconds() == 1_200_000)
        driver.core.reconfigure(CoreDriver.configuration {
            $0.probing.metering.primaryInterval = .off
            $0.kinds[.wwan] = { var layer = ProbingOverrides(); layer.intervalMilliseconds = 60_000; return layer }()
        })
        #expect(driver.core.nextWakeMilliseconds() == 60_000)
    }

    @Test func ourOwnProbesAreNotTrafficThatVouchesForTheUplink() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        var rx: UInt64 = 0, tx: UInt64 = 0
        // No LAN traffic: the counters move only when a probe runs.
        for step in 1...(4 * 60) {
            driver.now = step * 250
            driver.take(driver.core.tick(now: driver.instant))
            let probed = driver.plans.count
            driver.answerAll()
            if probed > 0 && driver.now % 10_000 == 0 { rx += 5; tx += 5 }
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
        }
        #expect(driver.plans(of: "eth0", .light).count == 6)
    }

    @Test func anEndpointThatFailsOverOneFamilyIsLeftOutThereOnly() {
        var driver = CoreDriver(CoreDriver.configuration())
        // microsoft has no AAAA record: it fails over IPv6 and validates over IPv4.
        driver.failingOverIPv6["eth0"] = ["microsoft"]
        driver.links([dualStack("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 600_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        // Sidelined over IPv6 after the first full round: no doubt, no full round since.
        #expect(driver.plans(of: "eth0", .full).count == 1)
        let light = driver.plans(of: "eth0", .light)
        #expect(light.count == 60)
        #expect(!light.contains { $0.probes(for: .ipv6)[0].name == "microsoft" })
        #expect(light.contains { $0.probes(for: .ipv4)[0].name == "microsoft" })
    }

    @Test func aSlowLinkIsLookedAtAgainAtTheCeilingsNotCalledDead() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 10_000)
        // Loaded now: connections open, answers take 2 s, over the learned 1 s limit.
        driver.slow = ["eth0"]
        driver.advance(to: 20_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        let fulls = driver.plans(of: "eth0", .full)
        #expect(fulls.count == 3)
        // The confirming round goes below the usual floor (its round trips allow it)...
        #expect(fulls[1].timeoutMilliseconds == AgentCore.confirmationFloorMilliseconds)
        #expect(fulls[2].timeoutMilliseconds == 5_000)
        // A blackhole (nothing connects) is decided at once, at the short limit.
        driver.slow = []
        driver.dead = ["eth0"]
        driver.advance(to: 40_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
    }

    @Test func aPausedAlarmIsRaisedAgainOnceThePauseEnds() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        var tx: UInt64 = 0
        // One-way traffic: a false alarm, then a pause of 10 s.
        for step in 1...40 {
            driver.now = step * 250
            tx += 5
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: 0, transmittedPackets: tx, now: driver.instant))
            driver.answerAll()
        }
        // During the pause eth0's upstream dies; its light rounds are 10 s apart.
        driver.dead = ["eth0"]
        var movedAt: Int?
        for step in 41...140 where movedAt == nil {
            driver.now = step * 250
            tx += 5
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: 0, transmittedPackets: tx, now: driver.instant))
            driver.answerAll()
            if driver.core.primary == "wlan0" { movedAt = driver.now }
        }
        // Found by the alarm right after the pause (not after several light rounds).
        #expect(movedAt.map { $0 <= 13_000 } == true)
    }

    @Test func aMeteredBackupIsVerifiedForThePrimarysDoubtsAtMostOncePerItsInterval() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        // google is blocked on eth0 now and then: each light round that hits it is a doubt.
        driver.failing["eth0"] = ["google"]
        for minute in 1...30 {
            driver.advance(to: minute * 60_000)
            driver.take(driver.core.probeNow("eth0", now: driver.instant))  // a portal hook, say: a doubt
            driver.answerAll()
        }
        #expect(driver.core.primary == "eth0")
        // 30 doubts of the primary in 30 min; the 20-min metered backup verified twice.
        #expect(driver.plans(of: "wwan0", .verify).count <= 2)
    }

    @Test func reloadingProbeWhenOnlineBackOnProbesAgain() {
        var driver = CoreDriver(CoreDriver.configuration { $0.probing.probeWhenOnline = false })
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 60_000)
        #expect(driver.plans(of: "eth0").count == 1)
        driver.core.reconfigure(CoreDriver.configuration())
        driver.take(driver.core.tick(now: driver.instant))  // overdue: at once
        driver.answerAll()
        driver.advance(to: 120_000)
        #expect(driver.plans(of: "eth0", .light).count == 7)
    }
}
