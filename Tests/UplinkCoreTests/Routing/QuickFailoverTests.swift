import Testing
import UplinkCore
import UplinkTestSupport

/// The timing rules of a fast failover: the quick stall rule and its false alarms, the
/// confirming round's floor, and liveness rounds between light rounds.
@Suite("Quick failover: stalls, confirmation and liveness")
struct QuickFailoverTests {
    // MARK: the quick stall rule

    private func quick(_ roundTrip: Int, variation: Int? = nil, window: Int = 1_500) -> TrafficMonitor.QuickStall? {
        var figures = QualityFigures()
        figures.roundTripMilliseconds = roundTrip
        figures.roundTripVariationMilliseconds = variation
        return TrafficMonitor.QuickStall.of(figures, windowMilliseconds: window)
    }

    @Test func theQuickWindowFollowsTheUplinksOwnRoundTrips() {
        #expect(quick(1, variation: 0)?.windowMilliseconds == 300)       // a LAN-fast path: the floor
        #expect(quick(30, variation: 5)?.windowMilliseconds == 300)      // 8 round trips are 240 ms
        #expect(quick(100, variation: 10)?.windowMilliseconds == 800)    // 8 round trips
        #expect(quick(100, variation: 60)?.windowMilliseconds == 1_020)  // 3 timeouts: jittery
        // A 300 ms path gets no quick rule: the configured window is shorter.
        #expect(quick(300, variation: 20) == nil)
        // Unknown round trips (no probe validated yet): the configured window only.
        #expect(TrafficMonitor.QuickStall.of(nil, windowMilliseconds: 1_500) == nil)
        #expect(TrafficMonitor.QuickStall.of(QualityFigures(), windowMilliseconds: 1_500) == nil)
        #expect(quick(1)?.unansweredPackets == 4)
    }

    /// Samples every 100 ms: `sent` packets out and `answered` back per sample.
    private func samples(_ monitor: inout TrafficMonitor, from: Int, to: Int, sent: UInt64, answered: UInt64,
                         rx: inout UInt64, tx: inout UInt64, quick: TrafficMonitor.QuickStall?) -> Int? {
        var stalledAt: Int?
        for time in stride(from: from, through: to, by: 100) {
            rx += answered
            tx += sent
            let observation = monitor.sample(receivedPackets: rx, transmittedPackets: tx, at: time,
                                             windowMilliseconds: 1_500, quick: quick)
            if observation == .stalled && stalledAt == nil { stalledAt = time }
        }
        return stalledAt
    }

    @Test func aBusyLinkThatGoesSilentIsAStallWithinTheQuickWindow() {
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        let rule = quick(1, variation: 0)
        #expect(samples(&monitor, from: 0, to: 2_000, sent: 4, answered: 4, rx: &rx, tx: &tx, quick: rule) == nil)
        // Cut after 2 s: packets keep leaving, nothing comes back.
        #expect(samples(&monitor, from: 2_100, to: 4_000, sent: 2, answered: 0, rx: &rx, tx: &tx, quick: rule) == 2_300)
    }

    @Test func falseAlarmCaseFewPacketsWaitForTheFullWindow() {
        // A lone retransmission or a last ACK: fewer than four packets unanswered.
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        let rule = quick(1, variation: 0)
        _ = samples(&monitor, from: 0, to: 1_000, sent: 3, answered: 3, rx: &rx, tx: &tx, quick: rule)
        tx += 3
        #expect(monitor.sample(receivedPackets: rx, transmittedPackets: tx, at: 1_100, windowMilliseconds: 1_500,
                               quick: rule) == .flowing(answered: false))
        #expect(samples(&monitor, from: 1_200, to: 2_400, sent: 0, answered: 0, rx: &rx, tx: &tx, quick: rule) == nil)
        #expect(samples(&monitor, from: 2_500, to: 2_600, sent: 0, answered: 0, rx: &rx, tx: &tx, quick: rule) == 2_500)
    }

    @Test func falseAlarmCaseRandomLossOfAFewPacketsNeverSilencesABusyLink() {
        // 2 % of the answers lost: 40 packets a second each way, never 300 ms without one.
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        let rule = quick(1, variation: 0)
        var stalls = 0
        for time in stride(from: 0, through: 600_000, by: 100) {
            tx += 4
            rx += (time / 100) % 50 == 0 ? 3 : 4
            if monitor.sample(receivedPackets: rx, transmittedPackets: tx, at: time, windowMilliseconds: 1_500,
                              quick: rule) == .stalled { stalls += 1 }
        }
        #expect(stalls == 0)
    }

    @Test func falseAlarmCaseALongPathKeepsTheConfiguredWindow() {
        // Answers come 300 ms after the packets leave: the quick rule is off for such a
        // path, and bursts of silence under 1.5 s are no stall.
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        let rule = quick(300, variation: 30)
        #expect(rule == nil)
        for time in stride(from: 0, through: 60_000, by: 100) {
            tx += 2
            if time % 1_200 == 0 { rx += 24 }
            #expect(monitor.sample(receivedPackets: rx, transmittedPackets: tx, at: time, windowMilliseconds: 1_500,
                                   quick: rule) != .stalled)
        }
    }

    @Test func falseAlarmCaseOneWayTrafficIsPausedByTheAgent() {
        // A UDP upload answered every 2 s raises the quick alarm; the full round
        // validates; alarms then pause for 10 s, doubling.
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 3, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 30_000)
        var rx: UInt64 = 0, tx: UInt64 = 0
        var alarms: [Int] = []
        for time in stride(from: 30_000, through: 150_000, by: 100) {
            driver.now = time
            tx += 10
            if time % 2_000 == 0 { rx += 5 }
            let actions = driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant)
            if actions.contains(where: { if case .note(.stalled) = $0 { true } else { false } }) { alarms.append(time) }
            driver.take(actions)
            driver.answerAll()
            driver.take(driver.core.tick(now: driver.instant))
            driver.answerAll()
        }
        #expect(driver.primaryChanges == ["eth0"])
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        // Fewer and fewer: the pauses grow 10, 20, 40, 80 s.
        #expect(alarms.count >= 3 && alarms.count <= 6, "\(alarms)")
        let gaps = zip(alarms.dropFirst(), alarms).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 10_000 }, "\(gaps)")
    }

    // MARK: the confirming round

    @Test func aConfirmingRoundGoesBelowTheFloorAndADeadPathIsDecidedThere() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 30_000)
        driver.dead = ["eth0"]
        driver.take(driver.core.trafficSampled("eth0", receivedPackets: 10, transmittedPackets: 10, now: at(30_100)))
        var rx: UInt64 = 10, tx: UInt64 = 10
        var confirming: RoundPlan?
        for time in stride(from: 30_200, through: 31_500, by: 100) where confirming == nil {
            tx += 3
            driver.now = time
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
            confirming = driver.plans(of: "eth0", .full).last { $0.timeoutMilliseconds < 1_000 }
        }
        rx += 0
        #expect(confirming?.timeoutMilliseconds == AgentCore.confirmationFloorMilliseconds)
        #expect(confirming?.dnsTimeoutMilliseconds == AgentCore.confirmationFloorMilliseconds)
        driver.answerAll(limit: 1)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
    }

    @Test func aLinkChangeOrAHookRequestKeepsTheUsualLimits() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet)])
        driver.answerAll()
        driver.advance(to: 30_000)
        driver.take(driver.core.probeNow("eth0", now: driver.instant))
        #expect(driver.plans(of: "eth0", .full).last?.timeoutMilliseconds == AgentCore.exchangeFloorMilliseconds)
    }

    // MARK: liveness rounds at the built-in cadence

    private func builtIn(_ change: (inout Configuration) -> Void = { _ in }) -> CoreDriver {
        var configuration = CoreDriver.configuration()
        configuration.kinds = [:]
        change(&configuration)
        var driver = CoreDriver(configuration)
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wwan0", index: 4, kind: .wwan)])
        driver.answerAll()
        return driver
    }

    @Test func anOnlineUnmeteredUplinkGetsAHandshakeEvery4sAndALightRoundEvery30s() {
        var driver = builtIn()
        driver.advance(to: 120_000)
        let liveness = driver.plans(of: "eth0", .liveness)
        let light = driver.plans(of: "eth0", .light)
        #expect(light.count == 4)
        // Every 4 s between light rounds: seven in each 30 s.
        #expect(liveness.count == 28, "\(liveness.count)")
        #expect(liveness.allSatisfy { $0.probes(for: .ipv4).count == 1 })
        // A handshake's failure only starts a full round: it gives up as early as a
        // confirming round would (the floor, on this fast uplink), not at the light
        // rounds' floor, so an idle primary's dead path is told within a second.
        #expect(liveness.allSatisfy { $0.timeoutMilliseconds == AgentCore.confirmationFloorMilliseconds })
        #expect(light.allSatisfy { $0.timeoutMilliseconds == AgentCore.exchangeFloorMilliseconds })
        // The metered backup keeps its own cadence, with no liveness rounds.
        #expect(driver.plans(of: "wwan0", .liveness).isEmpty)
    }

    @Test func aFailedHandshakeStartsAConfirmingFullRound() {
        var driver = builtIn()
        driver.advance(to: 10_000)
        driver.dead = ["eth0"]
        driver.advance(to: 14_500)
        let full = driver.plans(of: "eth0", .full).last
        #expect(full?.timeoutMilliseconds == AgentCore.confirmationFloorMilliseconds)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
    }

    @Test func answeredTrafficStandsInForHandshakes() {
        var driver = builtIn()
        driver.advance(to: 10_000)
        let before = driver.plans(of: "eth0", .liveness).count
        var rx: UInt64 = 0, tx: UInt64 = 0
        for time in stride(from: 10_100, through: 29_000, by: 100) {
            driver.now = time
            rx += 5
            tx += 5
            driver.take(driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant))
            driver.take(driver.core.tick(now: driver.instant))
            driver.answerAll()
        }
        #expect(driver.plans(of: "eth0", .liveness).count == before)
    }

    /// eth0 and wlan0, eth0 primary, then eth0's path dead from 20 s: wlan0 took over at 30 s.
    private func cutAt20s(_ change: (inout Configuration) -> Void = { _ in }) -> CoreDriver {
        var driver = builtIn(change)
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 3, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 20_000)
        driver.dead = ["eth0"]
        driver.advance(to: 30_000)
        #expect(driver.core.primary == "wlan0")
        return driver
    }

    /// Advances in 500-ms steps from 30 s until eth0 is online (2 minutes at most): when.
    private func untilEth0Online(_ driver: inout CoreDriver) -> Int {
        var back = 30_000
        while driver.core.verdict(of: "eth0")?.verdict != .online && back < 120_000 {
            back += 500
            driver.advance(to: back)
        }
        return back
    }

    @Test func aHeldDownUplinkProvesItselfWithLightRounds() {
        var driver = cutAt20s { $0.agent.holdDownMilliseconds = 30_000 }
        driver.dead = []
        let back = untilEth0Online(&driver)
        // Back online, and held down for 30 s from there.
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online && driver.core.primary == "wlan0")
        let before = driver.plans(of: "eth0").count
        driver.advance(to: back + 25_000)
        let proving = driver.plans(of: "eth0").dropFirst(before)
        #expect(proving.count >= 10 && proving.allSatisfy { $0.purpose == .light }, "\(proving.map(\.purpose))")
    }

    @Test func aPathThatCameBackOnRetransmittedSYNsKeepsItsShortLimits() {
        var driver = cutAt20s()
        // The cut ends while rounds are under way: their handshakes connect on the
        // SYN retransmitted a second later, and the rounds validate.
        driver.dead = []
        driver.firstSYNLossPercent["eth0"] = 100
        let back = untilEth0Online(&driver)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.plans(of: "eth0", .full).suffix(2).allSatisfy { $0.timeoutMilliseconds > 1_010 })
        driver.firstSYNLossPercent["eth0"] = 0
        let before = driver.plans(of: "eth0").count
        driver.advance(to: back + 40_000)
        // Those waits were the retransmission's, not the path's (Karn's rule): light and
        // liveness rounds after it keep their floors, so a second cut is found as fast.
        let after = driver.plans(of: "eth0").dropFirst(before)
        #expect(after.contains { $0.purpose == .light })
        #expect(after.filter { $0.purpose == .light }.allSatisfy { $0.timeoutMilliseconds == AgentCore.exchangeFloorMilliseconds },
                "\(after.map { "\($0.purpose) \($0.timeoutMilliseconds)" })")
        #expect(after.filter { $0.purpose == .liveness }.allSatisfy {
            $0.timeoutMilliseconds == AgentCore.confirmationFloorMilliseconds })
    }

    @Test func anUplinkInDoubtIsLookedAtEvery10sAtMostNotEvery30s() {
        let settings = Configuration().probingSettings(for: "eth0", kind: .ethernet, metered: false)
        #expect(settings.recheckIntervalMilliseconds == 10_000)
        var schedule = ProbeSchedule(settings: settings)
        var gaps: [Int] = []
        var now = 0
        for _ in 0..<8 {
            schedule.roundFinished(at: now, suspect: true, online: false, settings: settings)
            let next = schedule.nextDueMilliseconds!
            gaps.append(next - now)
            now = next
        }
        #expect(gaps == [500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000])
        // Not online, it is looked at every 10 s too.
        schedule.roundFinished(at: now, suspect: false, online: false, settings: settings)
        #expect(schedule.nextDueMilliseconds == now + 10_000)
        schedule.roundFinished(at: now, suspect: false, online: true, settings: settings)
        #expect(schedule.nextDueMilliseconds == now + 30_000)
        // A metered uplink (no liveness rounds) still backs off to its interval.
        let metered = Configuration().probingSettings(for: "wwan0", kind: .wwan, metered: true)
        #expect(metered.recheckIntervalMilliseconds == 1_200_000)
    }
}
