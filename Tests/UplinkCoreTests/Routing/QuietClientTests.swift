import Testing
import UplinkCore
import UplinkTestSupport

/// The setups the busy-LAN rules miss: one client that sends a request at a time (the
/// lone-packet rule), a primary whose only traffic is the agent's, and a site with no
/// primary at all (every uplink looked at again within seconds, metered or not).
@Suite("A quiet client, and a site without a primary")
struct QuietClientTests {
    private func lone(_ roundTrip: Int = 1) -> TrafficMonitor.LonePacket? {
        var figures = QualityFigures()
        figures.roundTripMilliseconds = roundTrip
        figures.roundTripVariationMilliseconds = 0
        return TrafficMonitor.LonePacket.of(figures, windowMilliseconds: 1_500)
    }

    /// Samples every 100 ms from `from` to `to`; the first `.lonePacket` and `.stalled` times.
    private func run(_ monitor: inout TrafficMonitor, from: Int, to: Int, rx: inout UInt64, tx: inout UInt64,
                     traffic: (Int) -> (sent: UInt64, answered: UInt64)) -> (lone: Int?, stalled: Int?) {
        var result: (lone: Int?, stalled: Int?) = (nil, nil)
        for time in stride(from: from, through: to, by: 100) {
            let step = traffic(time)
            tx += step.sent
            rx += step.answered
            switch monitor.sample(receivedPackets: rx, transmittedPackets: tx, at: time, windowMilliseconds: 1_500,
                                  quick: TrafficMonitor.QuickStall.of(QualityFigures(), windowMilliseconds: 1_500), lone: lone()) {
            case .lonePacket where result.lone == nil: result.lone = time
            case .stalled where result.stalled == nil: result.stalled = time
            default: break
            }
        }
        return result
    }

    @Test func theLoneWindowIsTheQuickOne() {
        #expect(lone(1)?.windowMilliseconds == 300)
        #expect(lone(100)?.windowMilliseconds == 800)
        #expect(lone(300) == nil, "no shorter than the configured window: the slow rule is as fast")
        #expect(TrafficMonitor.LonePacket.of(nil, windowMilliseconds: 1_500) == nil)
    }

    @Test func aLonePacketAfterAQuietMinuteWaitsItsOwnRoundTrips() {
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        _ = run(&monitor, from: 0, to: 1_000, rx: &rx, tx: &tx) { _ in (3, 3) }
        // A minute of nothing, then one request that nothing answers (the upstream died).
        let seen = run(&monitor, from: 61_000, to: 64_000, rx: &rx, tx: &tx) { $0 == 61_000 ? (1, 0) : (0, 0) }
        // Counted from the sample that saw it leave, not from the last answer a minute ago.
        #expect(seen.lone == 61_300)
        #expect(seen.stalled == nil, "one packet is not the stall rules' evidence")
    }

    @Test func aLonePacketAnsweredInTimeIsNoAlarm() {
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        // A request every 1.1 s, its answer 200 ms later.
        let seen = run(&monitor, from: 0, to: 10_000, rx: &rx, tx: &tx) { time in
            (time % 1_100 == 0 ? 1 : 0, time % 1_100 == 200 ? 3 : 0)
        }
        #expect(seen.lone == nil && seen.stalled == nil)
    }

    @Test func theLoneAlarmComesOncePerSilenceAndTheStallRulesStillFollow() {
        var monitor = TrafficMonitor()
        var rx: UInt64 = 0, tx: UInt64 = 0
        _ = run(&monitor, from: 0, to: 1_000, rx: &rx, tx: &tx) { _ in (3, 3) }
        // One packet, then a retry a second later: the lone alarm once, then the slow rule.
        let seen = run(&monitor, from: 1_100, to: 4_000, rx: &rx, tx: &tx) { time in
            (time == 1_100 || time == 2_100 ? 1 : 0, 0)
        }
        #expect(seen.lone == 1_400)
        #expect(seen.stalled == 2_500, "two unanswered, nothing back since 1 s: the window")
    }

    // MARK: the agent

    private func gateway() -> CoreDriver {
        var configuration = CoreDriver.configuration()
        configuration.kinds = [:]
        var driver = CoreDriver(configuration)
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 3, kind: .wifi),
                      uplink("wwan0", index: 4, kind: .wwan)])
        driver.answerAll()
        driver.advance(to: 30_000)
        return driver
    }

    /// One client's request every 1.1 s through eth0, answered until eth0's upstream is
    /// cut at `cut`; the stall notes raised, by time.
    private func quietClient(_ driver: inout CoreDriver, from: Int, to: Int, cut: Int) -> [Int: StallEvidence] {
        var rx: UInt64 = 1_000, tx: UInt64 = 1_000
        var notes: [Int: StallEvidence] = [:]
        for time in stride(from: from, through: to, by: 100) {
            driver.now = time
            if time >= cut { driver.dead = ["eth0"] }
            if time % 1_100 == 0 { tx += 1 }
            if time % 1_100 == 100 && time < cut { rx += 3 }
            let actions = driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant)
            for case .note(.stalled(_, let evidence)) in actions { notes[time] = evidence }
            driver.take(actions)
            driver.answerAll()
            driver.take(driver.core.tick(now: driver.instant))
            driver.answerAll()
        }
        return notes
    }

    @Test func aQuietClientsUnansweredRequestFailsOverWithinASecond() {
        var driver = gateway()
        let notes = quietClient(&driver, from: 30_000, to: 45_000, cut: 40_650)
        // The first request after the cut leaves at 40 700: the alarm 300 ms after the
        // sample that saw it, a confirming round, the failover.
        #expect(notes.keys.sorted() == [41_000], "\(notes)")
        #expect(notes[41_000]?.rule == .lonePacket && notes[41_000]?.unansweredPackets == 1)
        #expect(driver.primaryChanges.last == "wlan0")
        let confirming = driver.plans(of: "eth0", .full).last
        #expect(confirming?.timeoutMilliseconds == AgentCore.confirmationFloorMilliseconds)
        #expect(driver.core.stallAlarmTotals["eth0"] == [.lonePacket: 1])
    }

    @Test func aDisprovedLoneAlarmPausesTheLoneRuleOnly() {
        var driver = gateway()
        var rx: UInt64 = 1_000, tx: UInt64 = 1_000
        var alarms: [(Int, StallRule)] = []
        // One-way datagrams now and then (each a lone alarm a round disproves), then at
        // 40 s a burst that nothing answers for the quick rule.
        for time in stride(from: 30_000, through: 45_000, by: 100) {
            driver.now = time
            if time % 2_000 == 0 { tx += 1 }
            if time >= 40_000 && time < 41_000 { tx += 4 } else if time % 2_000 == 1_000 { rx += 3 }
            let actions = driver.core.trafficSampled("eth0", receivedPackets: rx, transmittedPackets: tx, now: driver.instant)
            for case .note(.stalled(_, let evidence)) in actions { alarms.append((time, evidence.rule)) }
            driver.take(actions)
            driver.answerAll()
        }
        #expect(alarms.first.map { $0.1 } == .lonePacket)
        #expect(alarms.filter { $0.1 == .lonePacket }.count == 1, "paused for 10 s after the first: \(alarms)")
        #expect(alarms.contains { $0.1 == .quick }, "the quick rule is not paused by a lone false alarm: \(alarms)")
        #expect(driver.primaryChanges == ["eth0"], "every alarm disproved: no failover")
    }

    @Test func aMeteredPrimarysLoneAlarmIsCheckedByItsNextCheapRound() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("wwan0", index: 4, kind: .wwan)])
        driver.answerAll()
        driver.advance(to: 30_000)
        #expect(driver.core.primary == "wwan0" && driver.core.isMetered("wwan0") == true)
        let before = driver.plans(of: "wwan0").count
        driver.take(driver.core.trafficSampled("wwan0", receivedPackets: 5, transmittedPackets: 10, now: at(30_000)))
        for time in stride(from: 30_100, through: 30_600, by: 100) {
            driver.now = time
            driver.take(driver.core.trafficSampled("wwan0", receivedPackets: 5, transmittedPackets: 11, now: driver.instant))
            driver.take(driver.core.tick(now: driver.instant))
        }
        // Its next round, now: a bare handshake here (a metered primary keeps liveness
        // rounds), a single light probe where it has none; never the whole set.
        let asked = driver.plans(of: "wwan0").dropFirst(before).map(\.purpose)
        #expect(asked == [.liveness], "one handshake, not the set: \(asked)")
        driver.answerAll()
        #expect(driver.core.stallAlarmTotals["wwan0"] == [.lonePacket: 1])
        #expect(driver.plans(of: "wwan0").dropFirst(before).count == 1, "the light round held: no full round")
    }

    @Test func withoutAPrimaryEveryUplinkIsLookedAtWithinSeconds() {
        var driver = gateway()
        driver.dead = ["eth0", "wlan0", "wwan0"]
        driver.advance(to: 120_000)
        #expect(driver.core.primary == nil)
        // The metered wwan0 normally waits 20 minutes between rounds when not online.
        let starts = driver.plans(of: "wwan0").map(\.purpose)
        #expect(starts.count > 10, "\(starts.count) rounds")
        driver.dead = ["eth0", "wlan0"]
        let restored = driver.now
        driver.advance(to: restored + 15_000)
        #expect(driver.core.primary == "wwan0")
        let back = driver.hooks.last { $0.kind == .primary && $0.primary == "wwan0" }
        #expect(back.map { $0.wallSeconds - at(restored).wallSeconds } ?? 99 <= 10)
    }

    @Test func withAPrimaryAgainTheOthersKeepTheirSchedules() {
        var driver = gateway()
        driver.dead = ["eth0", "wlan0", "wwan0"]
        driver.advance(to: 60_000)
        driver.dead = ["wlan0", "wwan0"]
        driver.advance(to: 80_000)
        #expect(driver.core.primary == "eth0")
        let before = driver.plans(of: "wwan0").count
        driver.advance(to: 200_000)
        #expect(driver.plans(of: "wwan0").count == before, "the metered backup's recheck is back to its own pace")
    }
}
