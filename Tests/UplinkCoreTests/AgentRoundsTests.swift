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
        #expect(light.allSatisfy { $0.probes.count == 1 })
        #expect(light.prefix(5).map { $0.probes[0].name } == ["apple", "google", "firefox", "microsoft", "debian"])
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
        #expect(!afterFull.contains { $0.probes[0].name == "google" })
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
        // Traffic flows and is answered for 30 s: no light probe is needed.
        for step in 1...120 {
            driver.now = step * 250
            rx += 10; tx += 10
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
            driver.take(driver.core.tick(now: driver.instant))
            driver.answerAll()
        }
        #expect(driver.plans(of: "eth0", .light).isEmpty)
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
        #expect(alarmedAt == 1_500)
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
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("wwan0", index: 3, kind: .wwan)])
        driver.answerAll()
        #expect(driver.core.nextWakeMilliseconds() == 1_200_000)
        driver.core.reconfigure(CoreDriver.configuration { $0.kinds[.wwan] = { var layer = ProbingOverrides(); layer.intervalMilliseconds = 60_000; return layer }() })
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
}
