import Testing
import UplinkCore
import UplinkTestSupport

private let eth0 = InterfaceName("eth0")
private let wlan0 = InterfaceName("wlan0")
private let wwan0 = InterfaceName("wwan0")

/// What the lab's wwan0 looks like to the counters: an Ethernet-framed veth.
private func reading(_ received: UInt64, _ transmitted: UInt64, packets: UInt64 = 0, index: Int = 3,
                     boot: String = "boot-a", header: Int = 0) -> CounterReading {
    CounterReading(device: DeviceIdentity(bootID: boot, index: index), receivedBytes: received, transmittedBytes: transmitted,
                   receivedPackets: packets, transmittedPackets: packets, headerBytes: header)
}

extension CoreDriver {
    /// Counter readings at `time` (else now); returns the step's actions.
    @discardableResult
    mutating func counters(_ readings: [InterfaceName: CounterReading], at time: Int? = nil) -> [AgentCore.Action] {
        if let time { now = time }
        let actions = core.countersRead(readings, now: instant)
        take(actions)
        return actions
    }

    func plan(_ name: InterfaceName) -> PlanStatus? {
        core.state(now: instant, pid: 1).uplinks.first { $0.interface == name }?.plan
    }

    var planEvents: [HookEvent] { hooks.filter { $0.kind == .plan } }
}

/// Milliseconds of driver time at which the wall clock (`at`) reads `wallSeconds`.
private func when(_ wallSeconds: Int) -> Int { (wallSeconds - 1_800_000_000) * 1_000 }

private func plannedConfiguration(limit: Int = 1_000_000, atCap: AtCap = .lastResort,
                                  _ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
    CoreDriver.configuration { c in
        var wwan = InterfaceSettings()
        wwan.probing.metering.plan = .bytes(limit)
        wwan.probing.metering.atCap = atCap
        c.interfaces[wwan0] = wwan
        change(&c)
    }
}

@Suite("Data plans: counting")
struct PlanCountingTests {
    @Test func theFirstReadingIsTheBaselineAndOnlyNewBytesCount() {
        var d = CoreDriver(plannedConfiguration())
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        #expect(d.core.accountedInterfaces == [wwan0])
        d.counters([wwan0: reading(5_000_000, 1_000_000)])   // what it carried before the plan
        #expect(d.plan(wwan0)?.usedBytes == 0)
        #expect(d.planSaves == 1)
        d.counters([wwan0: reading(5_100_000, 1_020_000)])
        #expect(d.plan(wwan0)?.received == 100_000 && d.plan(wwan0)?.sent == 20_000)
        d.counters([wwan0: reading(5_100_000, 1_020_000)])
        #expect(d.plan(wwan0)?.usedBytes == 120_000)
    }

    @Test func linkLayerHeadersAreNotBilled() {
        var account = TrafficAccount()
        _ = account.take(reading(1_000, 1_000, packets: 10, header: 14))
        // 10 more packets each way, 1,000 link bytes each way: 860 IP bytes.
        #expect(account.take(reading(2_000, 2_000, packets: 20, header: 14)) == ByteCounts(received: 860, transmitted: 860))
        #expect(CounterReading.headerBytes(hardwareType: 1) == 14 && CounterReading.headerBytes(hardwareType: 65_534) == 0)
    }

    @Test func aDeviceCreatedAgainIsCountedFromZeroAfterItsPredecessorsLastWord() {
        var account = TrafficAccount()
        _ = account.take(reading(1_000, 500, index: 3))
        // The old device's last word (its removal) carries what it did since.
        #expect(account.take(reading(1_800, 700, index: 3)) == ByteCounts(received: 800, transmitted: 200))
        // The new device (another index) carried 300 and 100 since it was created.
        #expect(account.take(reading(300, 100, index: 9)) == ByteCounts(received: 300, transmitted: 100))
        #expect(account.take(reading(350, 100, index: 9)) == ByteCounts(received: 50, transmitted: 0))
        // The same index after a reboot is another device too.
        #expect(account.take(reading(400, 120, index: 9, boot: "boot-b")) == ByteCounts(received: 400, transmitted: 120))
    }

    @Test func countersThatWentDownAreCountedFromZeroNeverBackwards() {
        var account = TrafficAccount()
        _ = account.take(reading(10_000, 10_000))
        // A driver cleared its statistics: what it counted since is new.
        #expect(account.take(reading(50, 100)) == ByteCounts(received: 50, transmitted: 100))
        #expect(account.take(reading(60, 100)) == ByteCounts(received: 10, transmitted: 0))
    }

    @Test func eachWayIsJudgedOnItsOwnSoAVethsLastWordCountsNothingTwice() {
        var account = TrafficAccount()
        _ = account.take(reading(10_000, 10_000))
        // A veth's removal: what it received reads zero (its peer's counters, gone
        // first), what it sent has grown by 300.
        #expect(account.take(reading(0, 10_300)) == ByteCounts(received: 0, transmitted: 300))
    }

    @Test func aRestartGoesOnFromTheSavedBaselineWithoutCountingTwice() throws {
        var first = CoreDriver(plannedConfiguration(limit: 10_000_000))
        first.links([uplink(wwan0, index: 3, kind: .wwan)])
        first.answerAll()
        first.counters([wwan0: reading(1_000, 1_000)])
        first.counters([wwan0: reading(401_000, 101_000)])
        // The agent stops (its last reading is saved with the count) ...
        #expect(first.core.countersRead([wwan0: reading(501_000, 151_000)], now: first.instant, final: true).isEmpty)
        let saved = PlanFileFormat.encode(first.core.planLedgers, writtenWallSeconds: first.instant.wallSeconds)
        #expect(first.plan(wwan0)?.usedBytes == 650_000)
        // ... traffic flows while it is stopped, and a new agent starts from the file.
        var second = CoreDriver(plannedConfiguration(limit: 10_000_000))
        second.core.restorePlans(try PlanFileFormat.decode(saved))
        second.links([uplink(wwan0, index: 3, kind: .wwan)])
        second.answerAll()
        second.counters([wwan0: reading(601_000, 201_000)])
        #expect(second.plan(wwan0)?.usedBytes == 650_000 + 150_000)
        second.counters([wwan0: reading(601_000, 201_000)])
        #expect(second.plan(wwan0)?.usedBytes == 800_000)
        // A reboot meanwhile: the device is another one, all of its counters are new.
        var third = CoreDriver(plannedConfiguration(limit: 10_000_000))
        third.core.restorePlans(try PlanFileFormat.decode(PlanFileFormat.encode(second.core.planLedgers, writtenWallSeconds: 0)))
        third.links([uplink(wwan0, index: 3, kind: .wwan)])
        third.answerAll()
        third.counters([wwan0: reading(3_000, 2_000, boot: "boot-b")])
        #expect(third.plan(wwan0)?.usedBytes == 805_000)
    }

    @Test func aRemovedInterfacesLastReadingCountsAfterItIsGone() {
        var d = CoreDriver(plannedConfiguration(limit: 10_000_000))
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(1_000, 1_000, index: 3)])
        d.links([uplink(eth0, index: 2, kind: .ethernet)], events: [.disappeared(usableLink(wwan0, index: 3))])
        #expect(d.core.accountedInterfaces.isEmpty)
        d.counters([wwan0: reading(9_000, 3_000, index: 3)])   // its removal's statistics
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 7, kind: .wwan)],
                events: [.appeared(usableLink(wwan0, index: 7))])
        d.answerAll()
        d.counters([wwan0: reading(400, 100, index: 7)])
        #expect(d.plan(wwan0)?.usedBytes == 8_000 + 2_000 + 500)
    }

    /// The old device's removal was still queued when a dump read its successor: its
    /// last word comes late and must count neither its life nor its successor's again.
    @Test func aRemovalReadAfterItsSuccessorCountsNothingTwice() {
        var d = CoreDriver(plannedConfiguration(limit: 10_000_000))
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(1_000, 1_000, index: 3)])
        d.counters([wwan0: reading(400, 100, index: 7)])          // the new device, from zero
        var late = reading(9_000, 3_000, index: 3)
        late.isRemoval = true
        d.counters([wwan0: late])
        d.counters([wwan0: reading(600, 300, index: 7)])
        #expect(d.plan(wwan0)?.usedBytes == 500 + 400)
    }

    @Test func thePlanFileKeepsEverythingACountNeeds() throws {
        var ledger = PlanLedger(cycleStartWallSeconds: 1_799_712_000, used: ByteCounts(received: 81_234_567, transmitted: 9_876_543),
                                marksTold: [75], account: TrafficAccount(baseline: reading(90_234_567, 10_876_543, packets: 7,
                                                                                           index: 7, header: 14)))
        let text = PlanFileFormat.encode([wwan0: ledger, eth0: PlanLedger(cycleStartWallSeconds: 5)], writtenWallSeconds: 1_800_000_000)
        #expect(text.contains("plan wwan0 1799712000 81234567 9876543 75 boot-a 7 90234567 10876543 7 7 14\n"))
        #expect(text.contains("plan eth0 5 0 0 - - - - - - - -\n"))
        let back = try PlanFileFormat.decode(text)
        #expect(back[wwan0]?.used == ledger.used && back[wwan0]?.marksTold == [75] && back[wwan0]?.account == ledger.account)
        #expect(back[eth0]?.account.baseline == nil)
        ledger.marksTold = []
        for bad in ["plan wwan0 x 1 2 - - - - - - - -", "plan wwan0 1 1 2 101 - - - - - - -", "plan wwan0 1 1 2 - b@d 1 1 1 1 1 0",
                    // Counts no cycle holds: their sums would overflow and trap the agent.
                    "plan wwan0 1 \(Int.max) 2 - - - - - - - -", "plan wwan0 1 1 \((1 << 56) + 1) - - - - - - - -"] {
            #expect(throws: PlanFileFormat.DecodeError.self) { try PlanFileFormat.decode("format 1\n\(bad)\n") }
        }
        #expect(throws: PlanFileFormat.DecodeError.self) { try PlanFileFormat.decode("plan wwan0 1 1 2 - - - - - - - -\n") }
    }
}

@Suite("Data plans: marks and cycles")
struct PlanMarkTests {
    @Test func eachMarkIsToldOnceACycleAndAgainInTheNext() {
        var d = CoreDriver(plannedConfiguration(limit: 1_000_000))
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(700_000, 49_999)])
        #expect(d.planEvents.isEmpty)
        d.counters([wwan0: reading(700_000, 50_000)])
        #expect(d.planEvents.map(\.planThreshold) == [.mark(75)])
        d.counters([wwan0: reading(800_000, 50_000)])
        #expect(d.planEvents.count == 1)
        // From 85 % to the cap in one reading: both marks, in order.
        d.counters([wwan0: reading(960_000, 60_000)])
        #expect(d.planEvents.map(\.planThreshold) == [.mark(75), .mark(95), .mark(100)])
        let cap = d.planEvents.last!
        #expect(cap.interface == wwan0 && cap.uplink?.plan?.capped == true)
        #expect(cap.environment.contains("UPLINK_EVENT=plan") && cap.environment.contains("UPLINK_PLAN_THRESHOLD=100"))
        #expect(cap.environment.contains("UPLINK_PLAN_USED_BYTES=1020000") && cap.environment.contains("UPLINK_PLAN_BYTES=1000000"))
        #expect(cap.environment.contains("UPLINK_PLAN_PERCENT=102"))
        #expect(cap.environment.contains("UPLINK_PLAN_RESETS=\(utc(2027, 2, 1))"))
        // The next cycle (1 February, UTC): told once, nothing used, marks told again.
        d.counters([wwan0: reading(970_000, 60_000)], at: when(utc(2027, 2, 1)) + 500)
        #expect(d.planEvents.map(\.planThreshold).suffix(1) == [.newCycle])
        #expect(d.plan(wwan0)?.usedBytes == 10_000 && d.plan(wwan0)?.capped == false)
        #expect(d.plan(wwan0)?.cycleStartWallSeconds == utc(2027, 2, 1) && d.plan(wwan0)?.cycleEndWallSeconds == utc(2027, 3, 1))
        d.counters([wwan0: reading(1_730_000, 60_000)])
        #expect(d.planEvents.map(\.planThreshold).suffix(2) == [.newCycle, .mark(75)])
        // Every event of an uplink with a plan carries its figures; others empty ones.
        let verdict = d.hooks.first { $0.kind == .verdict && $0.interface == eth0 }!
        #expect(verdict.environment.contains("UPLINK_PLAN_USED_BYTES=") && verdict.environment.contains("UPLINK_PLAN_THRESHOLD="))
    }

    @Test func aMarkToldBeforeARestartIsNotToldAgain() throws {
        var d = CoreDriver(plannedConfiguration(limit: 1_000_000))
        d.links([uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(800_000, 0)])
        #expect(d.planEvents.count == 1)
        var again = CoreDriver(plannedConfiguration(limit: 1_000_000))
        again.core.restorePlans(try PlanFileFormat.decode(PlanFileFormat.encode(d.core.planLedgers, writtenWallSeconds: 0)))
        again.links([uplink(wwan0, index: 3, kind: .wwan)])
        again.answerAll()
        again.counters([wwan0: reading(810_000, 0)])
        #expect(again.planEvents.isEmpty)
        again.counters([wwan0: reading(960_000, 0)])
        #expect(again.planEvents.map(\.planThreshold) == [.mark(95)])
    }

    @Test func aResetByHandStartsACycleNowThatEndsAtTheNextRegularStart() {
        var d = CoreDriver(plannedConfiguration(limit: 1_000_000))
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(900_000, 0)])
        let at = d.instant
        let actions = d.core.resetPlan(wwan0, now: at)
        #expect(actions != nil && d.core.resetPlan(eth0, now: at) == nil)
        d.take(actions!)
        #expect(d.plan(wwan0)?.usedBytes == 0 && d.plan(wwan0)?.cycleStartWallSeconds == at.wallSeconds)
        #expect(d.plan(wwan0)?.cycleEndWallSeconds == utc(2027, 2, 1))
        #expect(d.planEvents.last?.planThreshold == .newCycle)
        d.counters([wwan0: reading(1_000_000, 0)])
        #expect(d.plan(wwan0)?.usedBytes == 100_000)
    }

    @Test func aPlanWithoutALimitCountsAndTellsNothing() {
        var d = CoreDriver(CoreDriver.configuration { c in
            var wwan = InterfaceSettings()
            wwan.probing.metering.plan = .unlimited
            c.interfaces[wwan0] = wwan
        })
        d.links([uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(5_000_000_000, 0)])
        #expect(d.plan(wwan0)?.usedBytes == 5_000_000_000 && d.plan(wwan0)?.limitBytes == nil && d.planEvents.isEmpty)
    }

    @Test func theStateFileJSONAndTextfileShowThePlan() throws {
        var d = CoreDriver(plannedConfiguration(limit: 1_000_000))
        d.links([uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(600_000, 200_000)])
        let state = d.core.state(now: d.instant, pid: 42)
        let named = StateFileFormat.encode(state)
        for line in ["plan_used_bytes 800000", "plan_received_bytes 600000", "plan_bytes 1000000", "plan_percent 80",
                     "plan_started \(utc(2027, 1, 1))", "plan_resets \(utc(2027, 2, 1))", "plan_capped no",
                     "plan_at_cap last-resort", "standby warm"] {
            #expect(named.contains("\nuplink wwan0 \(line)\n"), "\(line)")
        }
        let again = try StateFileFormat.decode(named)
        #expect(again.uplinks.map(\.plan) == state.uplinks.map(\.plan) && again.uplinks.first?.standby == .warm)
        let text = StateFileFormat.encode(state, format: 1)
        #expect(text.contains(" 800000 1000000 \(utc(2027, 1, 1)) \(utc(2027, 2, 1)) 600000 200000 no last-resort warm\n"))
        let back = try StateFileFormat.decode(text)
        #expect(back.uplinks.map(\.plan) == state.uplinks.map(\.plan) && back.uplinks.first?.standby == .warm)
        let json = state.json.serialized()
        #expect(json.contains(#""plan":{"used_bytes":800000,"received_bytes":600000,"sent_bytes":200000,"limit_bytes":1000000,"percent":80,"#))
        let prometheus = PrometheusText.format(state, counters: MetricCounters())
        #expect(prometheus.contains(#"uplinkd_uplink_plan_used_bytes{interface="wwan0",kind="wwan"} 800000"#))
        #expect(prometheus.contains(#"uplinkd_uplink_plan_bytes{interface="wwan0",kind="wwan"} 1000000"#))
        // An older file without the columns still reads, without a plan.
        let old = text.split(separator: "\n").map { line in
            line.hasPrefix("uplink ") ? line.split(separator: " ").prefix(36).joined(separator: " ") : String(line)
        }.joined(separator: "\n")
        #expect(try StateFileFormat.decode(old).uplinks.first?.plan == nil)
    }
}

@Suite("Data plans: at the cap")
struct PlanCapTests {
    /// eth0 first, then the metered wwan0 before wlan0: only the cap keeps wwan0 from
    /// taking over from eth0.
    private static func driver(atCap: AtCap, holdDownMilliseconds: Int = 30_000) -> CoreDriver {
        var d = CoreDriver(plannedConfiguration(limit: 1_000_000, atCap: atCap) { c in
            c.agent.priority = [.interface(eth0), .interface(wwan0), .interface(wlan0)]
            c.agent.holdDownMilliseconds = holdDownMilliseconds
        })
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wlan0, index: 4, kind: .wifi), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(1_000_000, 0)])   // used up
        return d
    }

    @Test func aCappedUplinkIsTheLastResortAndHandsBackAtOnce() {
        var d = Self.driver(atCap: .lastResort)
        #expect(d.core.primary == eth0 && d.plan(wwan0)?.capped == true)
        d.dead.insert(eth0)
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == wlan0, "the capped wwan0 is passed over while wlan0 is online")
        d.dead.insert(wlan0)
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == wwan0, "the last resort when nothing else is online")
        // wlan0 comes back: it takes over as soon as it is online, hold-down or not.
        d.dead.remove(wlan0)
        let back = d.now
        d.advance(to: d.now + 40_000)
        let handover = d.hooks.last { $0.kind == .primary }!
        #expect(handover.primary == wlan0 && handover.previousPrimary == wwan0 && handover.primaryReason == .capped)
        #expect((handover.wallSeconds - at(back).wallSeconds) < 30, "no hold-down for a capped primary")
        // eth0 back later: the usual hold-down applies between uncapped uplinks.
        d.dead.remove(eth0)
        d.advance(to: d.now + 120_000)
        #expect(d.core.primary == eth0)
    }

    @Test func withoutTheCapTheSameMeteredUplinkWouldHaveTakenOver() {
        var d = Self.driver(atCap: .keep)
        d.dead.insert(eth0)
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == wwan0)
    }

    @Test func atCapDownNeverUsesIt() {
        var d = Self.driver(atCap: .down)
        d.dead.formUnion([eth0, wlan0])
        d.advance(to: d.now + 120_000)
        #expect(d.core.primary == nil)
        #expect(d.core.verdict(of: wwan0)?.verdict == .online)
    }

    /// wwan0 primary (preferred over wlan0) runs out under `at-cap = down`: it hands over
    /// to wlan0 as `capped`, which tells the route hook to flush as for a failback.
    @Test func aPrimaryThatReachesItsCapUnderDownHandsOverAsCapped() {
        var d = CoreDriver(plannedConfiguration(limit: 1_000_000, atCap: .down) { c in
            c.agent.priority = [.interface(eth0), .interface(wwan0), .interface(wlan0)]
        })
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wlan0, index: 4, kind: .wifi), uplink(wwan0, index: 3, kind: .wwan)])
        d.dead.insert(eth0)
        d.answerAll()
        d.advance(to: 60_000)
        #expect(d.core.primary == wwan0)
        d.counters([wwan0: reading(0, 0)])
        d.counters([wwan0: reading(1_000_000, 0)])
        d.advance(to: d.now + 1_000)
        #expect(d.core.primary == wlan0)
        let handover = d.hooks.last { $0.kind == .primary }
        #expect(handover?.previousPrimary == wwan0 && handover?.primaryReason == .capped)
    }

    @Test func aNewCycleLiftsTheCap() {
        var d = Self.driver(atCap: .lastResort)
        d.dead.insert(eth0)
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == wlan0)
        d.counters([wwan0: reading(1_000_100, 0)], at: when(utc(2027, 2, 1)) + 1_000)
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == wwan0)
    }
}

@Suite("Failback")
struct FailbackTests {
    private static func driver(_ failback: Failback) -> CoreDriver {
        var d = CoreDriver(CoreDriver.configuration { c in
            c.agent.holdDownMilliseconds = 30_000
            c.agent.failback = failback
        })
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wlan0, index: 4, kind: .wifi)])
        d.answerAll()
        d.dead.insert(eth0)
        d.advance(to: 60_000)
        #expect(d.core.primary == wlan0)
        d.dead.remove(eth0)
        return d
    }

    /// When eth0 took the primary back after it answered again at `back`; nil: not
    /// within ten minutes.
    private static func failbackSeconds(_ d: inout CoreDriver) -> Int? {
        let back = d.now
        d.advance(to: d.now + 600_000)
        guard let event = d.hooks.last(where: { $0.kind == .primary && $0.primary == eth0
            && $0.wallSeconds >= at(back).wallSeconds }) else { return nil }
        #expect(event.primaryReason == .recovered)
        return event.wallSeconds - at(back).wallSeconds
    }

    @Test func delayedWaitsOutTheHoldDown() {
        var d = Self.driver(.delayed)
        let seconds = Self.failbackSeconds(&d)
        #expect(seconds.map { (30...45).contains($0) } == true, "\(String(describing: seconds))")
    }

    @Test func immediateTakesItBackAsSoonAsItIsOnline() {
        var d = Self.driver(.immediate)
        let seconds = Self.failbackSeconds(&d)
        #expect(seconds.map { $0 < 15 } == true, "\(String(describing: seconds))")
    }

    @Test func neverKeepsTheBackupUntilItFails() {
        var d = Self.driver(.never)
        #expect(Self.failbackSeconds(&d) == nil)
        #expect(d.core.primary == wlan0 && d.core.verdict(of: eth0)?.verdict == .online)
        d.dead.insert(wlan0)
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == eth0)
    }
}

@Suite("Standby and the metered primary")
struct StandbyTests {
    private static func driver(standby: Standby?, wwanFirst: Bool = true) -> CoreDriver {
        var d = CoreDriver(CoreDriver.configuration { c in
            if let standby {
                var wwan = InterfaceSettings()
                wwan.probing.metering.standby = standby
                c.interfaces[wwan0] = wwan
            }
            if wwanFirst { c.agent.priority = [.interface(eth0), .interface(wwan0), .interface(wlan0)] }
        })
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        return d
    }

    /// Rounds started on wwan0 from `from` on.
    private static func rounds(_ d: CoreDriver, since from: Int) -> Int {
        d.plans(of: wwan0).count - from
    }

    @Test func coldSendsNothingWhileAnotherUplinkIsPrimaryAndIsVerifiedWhenNeeded() {
        var d = Self.driver(standby: .cold)
        #expect(d.core.primary == eth0 && d.core.verdict(of: wwan0)?.verdict == .online)
        let before = d.plans(of: wwan0).count
        d.advance(to: 2 * 3_600_000)
        #expect(Self.rounds(d, since: before) == 0, "a cold backup probed while eth0 was primary")
        // eth0 fails: wwan0 is verified (one short round) and takes over.
        d.dead.insert(eth0)
        d.advance(to: d.now + 30_000)
        #expect(d.core.primary == wwan0)
        #expect(d.plans(of: wwan0, .verify).count == 1)
    }

    /// One request that leaves eth0 unanswered puts eth0 in doubt, but the cold backup
    /// is not probed for it (a quiet LAN's false alarms would cost metered bytes each
    /// time); packets leaving with nothing back (a stall) have it verified at once.
    @Test func coldIsNotProbedForALonePacketButIsForAStall() {
        var d = Self.driver(standby: .cold)
        let before = d.plans(of: wwan0).count
        var time = 10_000
        d.take(d.core.trafficSampled(eth0, receivedPackets: 5, transmittedPackets: 10, now: at(time)))
        var lone = false
        for _ in 0..<6 {
            time += 100
            let actions = d.core.trafficSampled(eth0, receivedPackets: 5, transmittedPackets: 11, now: at(time))
            lone = lone || actions.contains { if case .note(.stalled(_, let evidence)) = $0 { evidence.rule == .lonePacket } else { false } }
            d.take(actions)
        }
        #expect(lone, "the lone-packet rule fired")
        d.answerAll()
        d.advance(to: time + 10_000)
        #expect(d.core.primary == eth0)
        #expect(Self.rounds(d, since: before) == 0, "the cold backup was probed for one unanswered packet")

        var sent: UInt64 = 20
        time = d.now
        for _ in 0..<10 {
            d.take(d.core.trafficSampled(eth0, receivedPackets: 5, transmittedPackets: sent, now: at(time)))
            sent += 5
            time += 500
        }
        #expect(d.notes.contains { if case .stalled(_, let evidence) = $0 { evidence.rule != .lonePacket } else { false } })
        d.tick(at: time)
        #expect(d.plans(of: wwan0, .verify).count == 1, "the cold backup verified beside the stall's confirmation")
    }

    @Test func coldIsProbedWhenItsOwnLinkChanges() {
        var d = Self.driver(standby: .cold)
        let before = d.plans(of: wwan0).count
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan, carrier: false)],
                events: [.carrierChanged(usableLink(wwan0, index: 3, carrier: false))])
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)],
                events: [.carrierChanged(usableLink(wwan0, index: 3))])
        d.answerAll()
        #expect(d.plans(of: wwan0, .full).count - d.plans(of: wwan0, .full).prefix(before).count >= 1)
        #expect(d.core.verdict(of: wwan0)?.verdict == .online)
    }

    @Test func warmIsTheMeteredScheduleAndHotTheUnmeteredOne() {
        var warm = Self.driver(standby: nil)
        var before = warm.plans(of: wwan0).count
        warm.advance(to: 2 * 3_600_000)
        #expect((5...7).contains(Self.rounds(warm, since: before)), "\(Self.rounds(warm, since: before)) rounds in 2 h")
        var hot = Self.driver(standby: .hot)
        before = hot.plans(of: wwan0).count
        hot.advance(to: 600_000)
        // A light round every 30 s, a liveness round every 4 s between them.
        #expect((145...165).contains(Self.rounds(hot, since: before)), "\(Self.rounds(hot, since: before)) rounds in 10 min")
        #expect(hot.plans(of: wwan0, .liveness).count > hot.plans(of: wwan0, .light).count)
    }

    @Test func aMeteredPrimaryIsCheckedOnItsOwnCadence() {
        var d = Self.driver(standby: nil)
        d.dead.insert(eth0)
        d.advance(to: 60_000)
        #expect(d.core.primary == wwan0)
        let before = d.plans(of: wwan0).count
        d.advance(to: 60_000 + 3_600_000)
        // A liveness round every 90 s while primary (and its light round every 20 min),
        // instead of one light round every 20 min.
        #expect((40...45).contains(Self.rounds(d, since: before)), "\(Self.rounds(d, since: before)) rounds in an hour")
        #expect(d.plans(of: wwan0, .liveness).count >= 36)
        // No DNS for them: each handshake goes to an address learned before, its TTL
        // (300 s here) long past or not.
        let liveness = d.plans(of: wwan0, .liveness).suffix(30)
        #expect(liveness.allSatisfy { plan in
            plan.probes(for: .ipv4).allSatisfy { plan.cachedAnswers[DNSAnswerCache.Key(host: $0.url.host, family: .ipv4)] != nil }
        })
        // A dead upstream while idle is found within one cadence.
        d.dead.insert(wwan0)
        let cut = d.now
        d.advance(to: d.now + 130_000)
        let down = d.hooks.first { $0.kind == .verdict && $0.interface == wwan0 && $0.previousVerdict == .online }
        #expect(down.map { $0.wallSeconds - at(cut).wallSeconds <= 95 } == true)
        // Back as a backup: its metered interval again.
        d.dead.subtract([wwan0, eth0])
        d.advance(to: d.now + 600_000)
        #expect(d.core.primary == eth0)
        let after = d.plans(of: wwan0).count
        d.advance(to: d.now + 3_600_000)
        #expect(Self.rounds(d, since: after) <= 4)
    }
}

@Suite("Standby: a parked bearer")
struct BearerStandbyTests {
    /// eth0 and a cold wwan0 whose modem (ModemManager's word: `modem`) keeps its bearer
    /// down while it waits; `change` adds to the configuration. Started: 5 s in when
    /// `settle`, else with nothing run but the first rounds.
    private static func driver(_ modemNow: ModemFacts = modem(), settle: Bool = true,
                               _ change: (inout Configuration) -> Void = { _ in }) -> CoreDriver {
        var d = CoreDriver(CoreDriver.configuration { c in
            var wwan = InterfaceSettings()
            wwan.probing.metering.standby = .cold
            wwan.probing.metering.standbyBearer = .disconnected
            c.interfaces[wwan0] = wwan
            change(&c)
        })
        d.modems([modemNow])
        d.links([uplink(eth0, index: 2, kind: .ethernet), uplink(wwan0, index: 3, kind: .wwan)])
        d.answerAll()
        if settle { d.advance(to: 5_000) }
        return d
    }

    @Test func aColdModemBackupIsDisconnectedWhileItWaitsAndConnectedWhenNeeded() {
        var d = Self.driver()
        let id = "861234567890128"
        #expect(d.core.primary == eth0)
        #expect(d.bearerSteps.map { $0.connected } == [false])
        #expect(d.bearerSteps.first?.equipmentID == id)
        #expect(d.core.parkedBearers == [id], "a stop would connect it again")
        // ModemManager: registered, the bearer down.
        d.modems([modem(.registered, bearerConnected: false)])
        #expect(d.core.verdict(of: wwan0)?.verdict == .down && d.core.verdict(of: wwan0)?.reason == .standby)
        let probed = d.plans(of: wwan0).count
        d.advance(to: 3_600_000)
        #expect(d.plans(of: wwan0).count == probed && d.recoveries.isEmpty, "no probe, no recovery while parked")
        let state = d.core.state(now: d.instant, pid: 1).uplinks.first { $0.interface == wwan0 }!
        #expect(state.quality.flapPenalty == 0 && state.standby == .cold)
        // eth0 fails: the bearer is connected, its first round validates, it takes over
        // (one primary change).
        d.dead.insert(eth0)
        d.advance(to: d.now + 20_000)
        #expect(d.bearerSteps.map { $0.connected } == [false, true])
        #expect(d.core.parkedBearers.isEmpty)
        #expect(d.core.primary == eth0, "the old choice stands while the bearer connects")
        d.modems([modem()])
        d.answerAll()
        d.advance(to: d.now + 1_000)
        #expect(d.core.primary == wwan0)
        #expect(d.primaryChanges.suffix(1) == [wwan0])
    }

    /// eth0 with a plan used up (last resort) stays primary while it is the only
    /// uplink online; a cold wwan0 parked behind it must come up and take over.
    @Test func aPrimaryAtItsCapDoesNotKeepAColdBackupParked() {
        var d = Self.driver { c in
            var eth = InterfaceSettings()
            eth.probing.metering.plan = .bytes(1_000_000)
            eth.probing.metering.atCap = .lastResort
            c.interfaces[eth0] = eth
        }
        #expect(d.core.primary == eth0 && d.bearerSteps.map { $0.connected } == [false])
        d.modems([modem(.registered, bearerConnected: false)])
        #expect(d.core.verdict(of: wwan0)?.reason == .standby)
        // eth0's plan runs out: it may stay primary only while nothing else is online.
        d.counters([eth0: reading(0, 0, index: 2)])
        d.counters([eth0: reading(1_000_000, 0, index: 2)])
        #expect(d.plan(eth0)?.capped == true)
        d.advance(to: d.now + 1_000)
        #expect(d.bearerSteps.map { $0.connected } == [false, true], "the parked bearer is connected again")
        d.modems([modem()])
        d.answerAll()
        d.advance(to: d.now + 60_000)
        #expect(d.core.primary == wwan0)
        let handover = d.hooks.last { $0.kind == .primary }
        #expect(handover?.previousPrimary == eth0 && handover?.primaryReason == .capped)
    }

    /// An agent restarted while the bearer it parked is down: the bearer is kept down
    /// (standby), not dialled by the recovery ladder only to be parked again, and a stop
    /// names it to be connected again.
    @Test func aBearerFoundDownWhileTheBackupWaitsIsTakenAsParked() {
        var d = Self.driver(modem(.registered, bearerConnected: false), settle: false)
        d.advance(to: 3_600_000)
        #expect(d.core.primary == eth0)
        #expect(d.bearerSteps.isEmpty && d.recoveries.isEmpty, "nothing dialled, nothing recovered")
        #expect(d.core.verdict(of: wwan0)?.reason == .standby)
        #expect(d.core.parkedBearers == ["861234567890128"])
    }

    @Test func aBearerThatDoesNotComeUpIsGivenUpToTheModemsWord() {
        var d = Self.driver()
        d.modems([modem(.registered, bearerConnected: false)])
        d.dead.insert(eth0)
        d.advance(to: 60_000)
        // Asked to connect, it never did: after 30 s it is a modem without a bearer
        // (bearer-disconnected), no longer a candidate, and the ladder may act.
        #expect(d.bearerSteps.map { $0.connected } == [false, true])
        #expect(d.core.verdict(of: wwan0)?.reason == .bearerDisconnected)
        #expect(d.core.primary == nil)
    }

    @Test func aLonePacketOnThePrimaryLeavesTheBearerParked() {
        var d = Self.driver()
        d.modems([modem(.registered, bearerConnected: false)])
        // One request leaves eth0 and nothing comes back: the lone-packet rule's doubt,
        // whose false alarms must not dial the metered backup each time.
        d.take(d.core.trafficSampled(eth0, receivedPackets: 5, transmittedPackets: 10, now: at(10_000)))
        var alarmed = false
        for time in stride(from: 10_100, through: 10_600, by: 100) {
            let actions = d.core.trafficSampled(eth0, receivedPackets: 5, transmittedPackets: 11, now: at(time))
            alarmed = alarmed || actions.contains { if case .note(.stalled(_, let evidence)) = $0 { evidence.rule == .lonePacket } else { false } }
            d.take(actions)
        }
        #expect(alarmed)
        d.tick(at: 10_700)
        #expect(d.bearerSteps.map { $0.connected } == [false], "still parked")
    }

    @Test func aStallOnThePrimaryConnectsTheBearerAtOnce() {
        var d = Self.driver()
        d.modems([modem(.registered, bearerConnected: false)])
        // Packets leave eth0 with nothing back: the primary is in doubt.
        var time = 10_000
        for sent in stride(from: UInt64(10), through: 60, by: 5) {
            d.take(d.core.trafficSampled(eth0, receivedPackets: 5, transmittedPackets: sent, now: at(time)))
            time += 500
        }
        #expect(d.notes.contains { if case .stalled = $0 { return true } else { return false } })
        #expect(d.core.nextWakeMilliseconds() ?? .max <= time)
        d.tick(at: time)
        #expect(d.bearerSteps.map { $0.connected } == [false, true])
    }
}
