import Testing
import UplinkCore

/// The outage journal's records, made from successive agent states with injected time:
/// site and uplink periods, failovers, a restart in the middle of an outage, a clock
/// that jumps, the file's lines and its bound, and the availability figures.
@Suite("Outage journal")
struct OutageJournalTests {
    private static let boot = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"

    /// A moment `seconds` after boot, its wall clock `wallOffset` ahead of the
    /// monotonic one.
    private func time(_ seconds: Double, wallOffset: Int = 1_764_600_000, boot: String = Self.boot,
                      synced: Bool = true) -> JournalTime {
        let milliseconds = Int(seconds * 1000)
        return JournalTime(wallSeconds: wallOffset + milliseconds / 1000, monotonicMilliseconds: milliseconds,
                           bootID: boot, synced: synced)
    }

    private func uplink(_ name: InterfaceName, _ verdict: Verdict, _ reason: Reason) -> UplinkStatus {
        UplinkStatus(interface: name, kind: .ethernet, verdict: verdict, reason: reason, sinceWallSeconds: 0)
    }

    private func state(_ primary: InterfaceName?, _ uplinks: [UplinkStatus]) -> AgentState {
        AgentState(primary: primary, uplinks: uplinks, writtenWallSeconds: 0, pid: 1)
    }

    private func primaryEvent(_ after: InterfaceName?, from before: InterfaceName?, _ reason: PrimaryChangeReason) -> HookEvent {
        var event = HookEvent(kind: .primary, interface: after, interfaceKind: .ethernet, verdict: .online,
                              previousVerdict: .online, reason: .validated, portalURL: nil, primary: after,
                              previousPrimary: before, wallSeconds: 0)
        event.primaryReason = reason
        return event
    }

    private let online = (eth0: UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: .validated, sinceWallSeconds: 0),
                          wlan0: UplinkStatus(interface: "wlan0", kind: .wifi, verdict: .online, reason: .validated, sinceWallSeconds: 0))

    @Test func aCutOfEveryUplinkIsOneSiteRecordWithEachReason() {
        var journal = OutageJournal()
        #expect(journal.observe(state("eth0", [online.eth0, online.wlan0]), events: [], at: time(1)).records.isEmpty)
        let cut = journal.observe(state(nil, [uplink("eth0", .down, .noCarrier), uplink("wlan0", .limited, .timeout)]),
                                  events: [primaryEvent(nil, from: "eth0", .lost)], at: time(100))
        #expect(cut.records.isEmpty)
        #expect(cut.openPeriodsChanged)
        #expect(journal.openPeriods.map(\.record.kind) == [.site, .uplink, .uplink])
        // A reason that changes during the outage is added, once.
        _ = journal.observe(state(nil, [uplink("eth0", .down, .noCarrier), uplink("wlan0", .limited, .dnsFailed)]),
                            events: [], at: time(110))
        _ = journal.observe(state(nil, [uplink("eth0", .down, .noCarrier), uplink("wlan0", .limited, .dnsFailed)]),
                            events: [], at: time(115))
        let back = journal.observe(state("eth0", [online.eth0, uplink("wlan0", .limited, .dnsFailed)]),
                                   events: [primaryEvent("eth0", from: nil, .start)], at: time(130.5))
        #expect(back.records.map(\.kind) == [.uplink, .site])
        let site = back.records[1]
        #expect(site.durationMilliseconds == 30_500)
        #expect(site.primaryBefore == "eth0")
        #expect(site.primaryAfter == "eth0")
        #expect(site.reasons == [JournalReason("eth0", .noCarrier), JournalReason("wlan0", .timeout),
                                 JournalReason("wlan0", .dnsFailed)])
        #expect(back.records[0].interface == "eth0")
        #expect(back.records[0].reasons == [JournalReason("eth0", .noCarrier)])
        // wlan0 is still not online: its period stays open.
        #expect(journal.openPeriods.map(\.record.interface) == ["wlan0"])
    }

    @Test func aFailoverIsRecordedAtOnceAndAnUplinkOutageInsideASiteOutageIsItsOwn() {
        var journal = OutageJournal()
        _ = journal.observe(state("eth0", [online.eth0, online.wlan0]), events: [], at: time(1))
        var lost = primaryEvent("wlan0", from: "eth0", .lost)
        lost.previousPrimaryProvenMillisecondsAgo = 2_400
        let failover = journal.observe(state("wlan0", [uplink("eth0", .limited, .timeout), online.wlan0]),
                                       events: [lost], at: time(10))
        #expect(failover.records.count == 1)
        #expect(failover.records[0].kind == .failover)
        #expect(failover.records[0].primaryBefore == "eth0")
        #expect(failover.records[0].primaryAfter == "wlan0")
        #expect(failover.records[0].primaryReason == .lost)
        #expect(failover.records[0].detectionMilliseconds == 2_400)
        #expect(failover.records[0].reasons == [JournalReason("eth0", .timeout)])
        // Then wlan0 fails too: the site is offline from 20 s to 50 s.
        _ = journal.observe(state(nil, [uplink("eth0", .limited, .timeout), uplink("wlan0", .down, .noCarrier)]),
                            events: [primaryEvent(nil, from: "wlan0", .lost)], at: time(20))
        let siteBack = journal.observe(state("wlan0", [uplink("eth0", .limited, .timeout), online.wlan0]),
                                       events: [primaryEvent("wlan0", from: nil, .lost)], at: time(50))
        #expect(siteBack.records.map(\.kind) == [.uplink, .site])
        #expect(siteBack.records[0].interface == "wlan0")
        #expect(siteBack.records[0].durationMilliseconds == 30_000)
        #expect(siteBack.records[1].durationMilliseconds == 30_000)
        #expect(siteBack.records[1].primaryBefore == "wlan0")
        // A primary that came back through no primary is not a failover.
        #expect(!siteBack.records.contains { $0.kind == .failover })
        let eth0Back = journal.observe(state("eth0", [online.eth0, online.wlan0]),
                                       events: [primaryEvent("eth0", from: "wlan0", .recovered)], at: time(100))
        #expect(eth0Back.records.map(\.kind) == [.failover, .uplink])
        #expect(eth0Back.records[0].primaryReason == .recovered)
        // The old primary still online: no reason of its to tell.
        #expect(eth0Back.records[0].reasons.isEmpty)
        #expect(eth0Back.records[1].interface == "eth0")
        #expect(eth0Back.records[1].durationMilliseconds == 90_000)
        #expect(journal.openPeriods.isEmpty)
    }

    @Test func nothingOpensBeforeTheFirstVerdicts() {
        var journal = OutageJournal()
        let starting = journal.observe(state(nil, [uplink("eth0", .unknown, .needsProbe), uplink("wlan0", .unknown, .needsProbe)]),
                                       events: [], at: time(1))
        #expect(starting.records.isEmpty)
        #expect(journal.openPeriods.isEmpty)
        _ = journal.observe(state("eth0", [online.eth0, uplink("wlan0", .unknown, .needsProbe)]), events: [], at: time(2))
        #expect(journal.openPeriods.isEmpty)
    }

    @Test func aRestartInTheMiddleOfAnOutageGivesOneRecordAndTheGap() throws {
        var before = OutageJournal()
        _ = before.observe(state("eth0", [online.eth0, online.wlan0]), events: [], at: time(1))
        _ = before.observe(state(nil, [uplink("eth0", .down, .noCarrier), uplink("wlan0", .down, .noCarrier)]),
                           events: [], at: time(100))
        // The last checkpoint, read back from its file; then a kill -9.
        let saved = try JournalCheckpoint(text: before.checkpoint(at: time(110), stopped: false).text)
        #expect(saved == before.checkpoint(at: time(110), stopped: false))

        var after = OutageJournal()
        let gap = after.resume(from: saved, at: time(140), lostAfterSeconds: 600)
        #expect(gap.count == 1)
        #expect(gap[0].kind == .absent)
        #expect(gap[0].cause == .lost)
        #expect(gap[0].uncertaintySeconds == 600)
        #expect(gap[0].durationMilliseconds == 30_000)
        // Starting up (no verdicts yet) ends nothing; the outage goes on after it.
        #expect(after.observe(state(nil, [uplink("eth0", .unknown, .needsProbe), uplink("wlan0", .unknown, .needsProbe)]),
                              events: [], at: time(141)).records.isEmpty)
        #expect(after.observe(state(nil, [uplink("eth0", .down, .noCarrier), uplink("wlan0", .down, .noCarrier)]),
                              events: [], at: time(142)).records.isEmpty)
        let back = after.observe(state("eth0", [online.eth0, uplink("wlan0", .down, .noCarrier)]), events: [], at: time(160))
        let site = try #require(back.records.first { $0.kind == .site })
        #expect(site.start == time(100))
        #expect(site.durationMilliseconds == 60_000)
        #expect(back.records.filter { $0.kind == .site }.count == 1)
    }

    @Test func anOutageThatEndedWhileTheAgentWasAwayEndsAtItsLastSignOfLife() {
        var before = OutageJournal()
        _ = before.observe(state("eth0", [online.eth0]), events: [], at: time(1))
        _ = before.observe(state(nil, [uplink("eth0", .down, .noCarrier)]), events: [], at: time(100))
        var after = OutageJournal()
        let gap = after.resume(from: before.checkpoint(at: time(120), stopped: true), at: time(300), lostAfterSeconds: 600)
        #expect(gap.map(\.cause) == [.stopped])
        #expect(gap[0].uncertaintySeconds == nil)
        let first = after.observe(state("eth0", [online.eth0]), events: [], at: time(301))
        #expect(first.records.map(\.kind) == [.uplink, .site])
        // Known down from 100 s to 120 s; after that, the gap record says the agent did not watch.
        #expect(first.records.allSatisfy { $0.durationMilliseconds == 20_000 })
    }

    @Test func afterARestartOnlyCarriedPeriodsEndAtTheLastSignOfLifeAndTheFirstPrimaryIsNoFailover() throws {
        var before = OutageJournal()
        _ = before.observe(state("eth0", [online.eth0, online.wlan0]), events: [], at: time(1))
        _ = before.observe(state(nil, [uplink("eth0", .down, .noCarrier), uplink("wlan0", .down, .noCarrier)]),
                           events: [], at: time(100))
        var after = OutageJournal()
        _ = after.resume(from: before.checkpoint(at: time(110), stopped: false), at: time(200), lostAfterSeconds: 600)
        // Starting: wlan0 still unknown, eth0 limited (a period of this run), no primary yet.
        _ = after.observe(state(nil, [uplink("eth0", .limited, .timeout), uplink("wlan0", .unknown, .starting)]),
                          events: [], at: time(201))
        // wlan0 validates first and becomes the primary: the outage had ended while the
        // agent was away, and this first primary is no failover from the old one.
        let first = after.observe(state("wlan0", [uplink("eth0", .limited, .timeout), online.wlan0]),
                                  events: [primaryEvent("wlan0", from: nil, .start)], at: time(202))
        #expect(!first.records.contains { $0.kind == .failover })
        let site = try #require(first.records.first { $0.kind == .site })
        #expect(site.end == time(110))
        #expect(first.records.first { $0.interface == "wlan0" }?.end == time(110))
        // eth0's period of this run ends when it comes back, not at the old checkpoint.
        let eth0Back = after.observe(state("eth0", [online.eth0, online.wlan0]),
                                     events: [primaryEvent("eth0", from: "wlan0", .recovered)], at: time(205))
        let eth0 = try #require(eth0Back.records.first { $0.kind == .uplink })
        #expect(eth0.start == time(100))
        #expect(eth0.end == time(205))
        #expect(eth0Back.records.map(\.kind) == [.failover, .uplink])
    }

    @Test func anUplinkThatVanishesEndsItsPeriod() {
        var journal = OutageJournal()
        _ = journal.observe(state("eth0", [online.eth0, online.wlan0]), events: [], at: time(1))
        _ = journal.observe(state("eth0", [online.eth0, uplink("wlan0", .limited, .timeout)]), events: [], at: time(10))
        let gone = journal.observe(state("eth0", [online.eth0]), events: [], at: time(20))
        #expect(gone.records.map(\.interface) == ["wlan0"])
        #expect(gone.records.first?.durationMilliseconds == 10_000)
        #expect(journal.openPeriods.isEmpty)
    }

    @Test func oddInterfaceNamesAndHugeNumbersCannotBreakALine() throws {
        let odd = try #require(InterfaceName("e,1=%x"))
        var record = JournalRecord(kind: .uplink, interface: odd, start: time(1), end: time(2))
        record.reasons = [JournalReason(odd, .timeout), JournalReason("wlan0", .noCarrier)]
        record.primaryBefore = odd
        record.bytes = [odd: 5]
        let line = JournalLine.encode(record)
        #expect(try JournalLine.decode(Substring(line)) == record, "\(line)")
        var journal = OutageJournal()
        _ = journal.observe(state(odd, [uplink(odd, .online, .validated)]), events: [], at: time(1))
        _ = journal.observe(state(nil, [uplink(odd, .down, .noCarrier)]), events: [], at: time(2))
        let checkpoint = journal.checkpoint(at: time(3), stopped: false)
        #expect(try JournalCheckpoint(text: checkpoint.text) == checkpoint)
        // A damaged file cannot make a duration overflow.
        #expect(throws: JournalLineError.self) { try JournalLine.decode("site start=99999999999999999 boot=ab") }
        #expect(throws: JournalLineError.self) {
            try JournalCheckpoint(text: "alive wall=99999999999999999 mono=1 boot=ab\n")
        }
    }

    @Test func timesBeforeTheClockSyncAreCorrectedAndDurationsIgnoreTheJump() throws {
        // Booted at a saved 1 Jan 2026; NTP later moved the wall clock 30 days ahead.
        let unsyncedOffset = 1_767_225_600
        let syncedOffset = unsyncedOffset + 30 * 86_400
        var journal = OutageJournal()
        _ = journal.observe(state("eth0", [online.eth0]), events: [], at: time(5, wallOffset: unsyncedOffset, synced: false))
        _ = journal.observe(state(nil, [uplink("eth0", .limited, .timeout)]), events: [],
                            at: time(10, wallOffset: unsyncedOffset, synced: false))
        let closed = journal.observe(state("eth0", [online.eth0]), events: [], at: time(70, wallOffset: syncedOffset))
        let site = try #require(closed.records.first { $0.kind == .site })
        #expect(site.durationMilliseconds == 60_000)
        var clock = JournalRecord(kind: .clock, start: time(40, wallOffset: syncedOffset), end: time(40, wallOffset: syncedOffset))
        clock.end = clock.start
        let history = JournalHistory(records: [site, clock])
        let corrected = try #require(history.listed(interface: nil, sinceWallSeconds: nil).first)
        #expect(corrected.start.wallSeconds == syncedOffset + 10)
        #expect(corrected.start.synced)
        // Without a clock record the time stays, still marked.
        #expect(JournalHistory(records: [site]).records[0].start == site.start)
    }

    @Test func everyKindRoundTripsThroughItsLine() throws {
        var site = JournalRecord(kind: .site, start: time(100), end: time(130.25))
        site.reasons = [JournalReason("eth0", .noCarrier), JournalReason("wwan0", .modemNotRegistered)]
        site.primaryBefore = "eth0"
        site.primaryAfter = "wwan0"
        site.recoverySteps = ["wwan0": 2]
        site.bytes = ["wwan0": 123_456]
        var uplinkRecord = JournalRecord(kind: .uplink, interface: "wlan0", start: time(1, synced: false), end: time(2))
        uplinkRecord.reasons = [JournalReason("wlan0", .redirect)]
        var failover = JournalRecord(kind: .failover, start: time(5), end: time(5))
        failover.primaryBefore = "eth0"
        failover.primaryAfter = "wlan0"
        failover.primaryReason = .degraded
        failover.detectionMilliseconds = 1_250
        var absent = JournalRecord(kind: .absent, start: time(900, boot: "aaaa-bbbb"), end: time(3))
        absent.cause = .lost
        absent.uncertaintySeconds = 600
        var dropped = JournalRecord(kind: .dropped, start: time(7), end: time(7))
        dropped.droppedCount = 42
        let clock = JournalRecord(kind: .clock, start: time(8), end: time(8))
        for record in [site, uplinkRecord, failover, absent, dropped, clock] {
            let line = JournalLine.encode(record)
            #expect(!line.contains("\n"))
            #expect(try JournalLine.decode(Substring(line)) == record, "\(line)")
        }
        #expect(JournalLine.encode(site).hasPrefix("site start=1764600100 end=1764600130 duration_ms=30250 "))
    }

    @Test func aBadLineNamesItsKey() {
        func problem(_ line: String) -> String? {
            do { _ = try JournalLine.decode(Substring(line)); return nil } catch { return error.description }
        }
        #expect(problem("site start=1 boot=ab") == nil)
        #expect(problem("# a comment") == nil)
        #expect(problem("outage start=1 boot=ab") == "unknown record kind 'outage'")
        #expect(problem("site start=x boot=ab") == "start: 'x' is not a number from 0 to \(1 << 50)")
        #expect(problem("site start=1") == "boot: missing")
        #expect(problem("site start=1 boot=ab reasons=eth0:sunspots") == "reasons: 'eth0:sunspots' is not IFACE:REASON")
        #expect(problem("uplink start=1 boot=ab") == "interface: missing")
        #expect(problem("site start=1 boot=ab primary_before=../x") == "primary_before: '../x' is not an interface name")
        #expect(problem("site start=1 boot=ab free text") == "'free' is not key=value")
    }

    /// A damaged journal may hold any bytes, and `history` prints the problem on a
    /// terminal: what it quotes of the line must not clear the screen or ring.
    @Test func aGarbageLineIsQuotedWithItsControlCharactersEscaped() {
        func problem(_ line: String) -> String {
            do { _ = try JournalLine.decode(Substring(line)); return "read" } catch { return error.description }
        }
        let garbage = "\u{1b}[2J\u{7}\u{0}\u{ff}\u{9b}"
        #expect(problem(garbage) == #"unknown record kind '\u{1b}[2J\u{7}\u{0}\u{ff}\u{9b}'"#)
        let problems = [
            problem(garbage), problem("site start=1 boot=ab \(garbage)"), problem("site start=\(garbage) boot=ab"),
            problem("site start=1 boot=\(garbage)"), problem("site start=1 boot=ab reasons=eth0:\(garbage)"),
            problem("site start=1 boot=ab primary_after=\(garbage)"), problem("site start=1 boot=ab primary_reason=\(garbage)"),
            problem("absent start=1 boot=ab cause=\(garbage)"), problem("site start=1 boot=ab bytes=\(garbage)"),
        ]
        for text in problems {
            #expect(text.contains(#"\u{1b}"#), "\(text.printableEscaped)")
            #expect(text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7f }, "\(text.printableEscaped)")
        }
        // At most 32 characters of the value are quoted, however many it has.
        #expect(problem("site start=\(String(repeating: "\u{7}", count: 1_000)) boot=ab").count < 32 * 6 + 60)
        do {
            _ = try JournalCheckpoint(text: "alive wall=1 mono=1 boot=ab primary=\u{1b}[2J\n")
            Issue.record("a checkpoint with a garbage primary was read")
        } catch {
            #expect(error.description == #"line 1: primary: '\u{1b}[2J' is not an interface name"#)
        }
    }

    @Test func theJournalIsCompactedToAQuarterBelowItsBoundAndCountsWhatItDropped() throws {
        func line(_ index: Int) -> Substring {
            Substring(JournalLine.encode(JournalRecord(kind: .failover, start: time(Double(index)), end: time(Double(index)))))
        }
        let within = [Substring(JournalLine.header)] + (0..<100).map(line)
        #expect(JournalLine.compacted(within, maximumRecords: 100, at: time(1000)) == nil)
        var earlierDrop = JournalRecord(kind: .dropped, start: time(0), end: time(0))
        earlierDrop.droppedCount = 7
        let over = [Substring(JournalLine.header), Substring(JournalLine.encode(earlierDrop))] + (0..<101).map(line)
        let kept = try #require(JournalLine.compacted(over, maximumRecords: 100, at: time(1000)))
        #expect(kept.count == 2 + 75)
        #expect(kept[0] == JournalLine.header)
        #expect(try JournalLine.decode(Substring(kept[1]))?.droppedCount == 7 + 26)
        #expect(kept.last == String(line(100)))
        #expect(kept[2] == String(line(26)))
    }

    @Test func theJournalKeysAreReadAtTheStartOnly() throws {
        let running = try ConfigurationParser(fileName: "a.conf").parse("[agent]\njournal-file = /var/lib/x/journal\n")
        var fresh = try ConfigurationParser(fileName: "b.conf").parse("[agent]\njournal-file = none\njournal-records = 200\n")
        #expect(fresh.keepRestartOnlySettings(of: running) == [.journal(kept: running.agent.journal)])
        #expect(fresh.agent.journal.path == "/var/lib/x/journal")
        #expect(fresh.agent.journal.maximumRecords == 5_000)
        #expect(fresh.agent.journal.checkpointPath == "/var/lib/x/journal.checkpoint")
        var same = running
        #expect(same.keepRestartOnlySettings(of: running).isEmpty)
    }

    @Test func availabilityLeavesTheAgentsAbsenceOutOfTheWatchedTime() throws {
        let from = 1_764_600_000
        var site = JournalRecord(kind: .site, start: time(1000), end: time(1030))
        site.primaryBefore = "eth0"
        let eth0a = JournalRecord(kind: .uplink, interface: "eth0", start: time(1000), end: time(1030))
        let eth0b = JournalRecord(kind: .uplink, interface: "eth0", start: time(5000), end: time(5090))
        // Partly before the period: only its part inside counts.
        let wlan0 = JournalRecord(kind: .uplink, interface: "wlan0", start: time(-60), end: time(60))
        var absent = JournalRecord(kind: .absent, start: time(10_000), end: time(13_600))
        absent.cause = .stopped
        // Down across the agent's absence: only the watched part counts.
        let eth0c = JournalRecord(kind: .uplink, interface: "eth0", start: time(9_000), end: time(14_000))
        let history = JournalHistory(records: [wlan0, site, eth0a, eth0b, absent, eth0c])
        let result = history.availability(fromWallSeconds: from, toWallSeconds: from + 86_400)
        #expect(result.absentSeconds == 3600)
        #expect(result.site.observedSeconds == 82_800)
        #expect(result.site.outages == 1)
        #expect(result.site.outageSeconds == 30)
        #expect(abs(try #require(result.site.availabilityPercent) - 100 * (1 - 30.0 / 82_800)) < 1e-9)
        let eth0 = try #require(result.uplinks.first { $0.0 == "eth0" }?.1)
        #expect(eth0.outages == 3)
        #expect(eth0.outageSeconds == 120 + 1_000 + 400)
        #expect(eth0.longestSeconds == 5_000)
        #expect(eth0.meanToRecoverSeconds == 5_120.0 / 3)
        let wlan0Figures = try #require(result.uplinks.first { $0.0 == "wlan0" }?.1)
        #expect(wlan0Figures.outageSeconds == 60)
        // An uplink's records are its own outages and the site's and failovers naming it,
        // oldest start first.
        #expect(history.listed(interface: "wlan0", sinceWallSeconds: nil) == [wlan0])
        #expect(history.listed(interface: "eth0", sinceWallSeconds: nil) == [site, eth0a, eth0b, eth0c])
        #expect(history.listed(interface: nil, sinceWallSeconds: from + 2000).map(\.kind) == [.uplink, .uplink, .absent])
    }

    @Test func anOutageStillGoingOnIsReadFromTheCheckpointUntilNowOrTheLastSignOfLife() throws {
        var journal = OutageJournal()
        _ = journal.observe(state("eth0", [online.eth0]), events: [], at: time(1))
        _ = journal.observe(state(nil, [uplink("eth0", .down, .noCarrier)]),
                            events: [primaryEvent(nil, from: "eth0", .lost)], at: time(100))
        // The checkpoint as a reader finds it on disk, saved at 160 s.
        let saved = try JournalCheckpoint(text: journal.checkpoint(at: time(160), stopped: false).text)
        let now = time(400).wallSeconds
        // The agent runs (a checkpoint younger than two heartbeats): until now.
        let running = saved.ongoing(nowWallSeconds: now, freshSeconds: 1_200)
        #expect(running.map(\.kind) == [.site, .uplink])
        #expect(running.allSatisfy { $0.ongoing && $0.durationMilliseconds == 300_000 && $0.end.wallSeconds == now })
        #expect(running[0].reasons == [JournalReason("eth0", .noCarrier)])
        // Its checkpoint is stale: all that is known is its last sign of life.
        let stale = saved.ongoing(nowWallSeconds: now, freshSeconds: 60)
        #expect(stale.allSatisfy { $0.durationMilliseconds == 60_000 })
        // Availability counts it as an outage, not as one recovered from.
        let figures = JournalHistory(records: [], ongoing: running)
            .availability(fromWallSeconds: time(0).wallSeconds, toWallSeconds: now).site
        #expect(figures.outages == 1 && figures.outageSeconds == 300 && figures.meanToRecoverSeconds == nil)
        #expect(running[0].json.serialized().contains(#""ongoing":true"#))
        #expect(!JournalLine.encode(running[0]).contains("ongoing"))
    }

    @Test func theSiteTimeOnAMeteredPrimaryIsAPeriodOfItsOwnAndAvailabilitySumsIt() throws {
        var journal = OutageJournal()
        var wwan0 = UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .online, reason: .validated, sinceWallSeconds: 0)
        wwan0.metered = true
        _ = journal.observe(state("eth0", [online.eth0, wwan0]), events: [], at: time(1))
        #expect(journal.metered == nil)
        let over = journal.observe(state("wwan0", [uplink("eth0", .down, .noCarrier), wwan0]),
                                   events: [primaryEvent("wwan0", from: "eth0", .lost)], at: time(100))
        #expect(over.records.map(\.kind) == [.failover])
        #expect(journal.metered?.record.interface == "wwan0" && over.openPeriodsChanged)
        // Carried over a restart like the other periods.
        let saved = try JournalCheckpoint(text: journal.checkpoint(at: time(200), stopped: true).text)
        var again = OutageJournal()
        _ = again.resume(from: saved, at: time(205), lostAfterSeconds: 600)
        _ = again.observe(state("wwan0", [uplink("eth0", .down, .noCarrier), wwan0]), events: [], at: time(210))
        let back = again.observe(state("eth0", [online.eth0, wwan0]),
                                 events: [primaryEvent("eth0", from: "wwan0", .recovered)], at: time(400))
        let metered = try #require(back.records.first { $0.kind == .metered })
        #expect(metered.interface == "wwan0" && metered.durationMilliseconds == 300_000)
        #expect(try JournalLine.decode(Substring(JournalLine.encode(metered))) == metered)
        let history = JournalHistory(records: back.records + [JournalRecord(kind: .absent, start: time(200), end: time(205))])
        let figures = history.availability(fromWallSeconds: time(0).wallSeconds, toWallSeconds: time(1000).wallSeconds)
        // 300 s on wwan0, less the 5 s the agent was away.
        #expect(figures.site.meteredSeconds == 295)
        #expect(figures.uplinks.first { $0.0 == "wwan0" }?.1.meteredSeconds == 295)
        #expect(figures.uplinks.first { $0.0 == "eth0" }?.1.meteredSeconds == 0)
        #expect(history.listed(interface: "wwan0", sinceWallSeconds: nil).contains(metered))
    }

    @Test func aPeriodAlreadyInTheJournalIsNotCarriedOnAgain() throws {
        var journal = OutageJournal()
        _ = journal.observe(state("eth0", [online.eth0]), events: [], at: time(1))
        _ = journal.observe(state(nil, [uplink("eth0", .down, .noCarrier)]),
                            events: [primaryEvent(nil, from: "eth0", .lost)], at: time(100))
        // The checkpoint saved with the outage open; then the outage ended and its
        // records were appended, and the agent died before the next checkpoint.
        let stale = journal.checkpoint(at: time(110), stopped: false)
        let ended = journal.observe(state("eth0", [online.eth0]), events: [primaryEvent("eth0", from: nil, .start)],
                                    at: time(120)).records
        #expect(ended.map(\.kind) == [.uplink, .site])
        #expect(stale.withoutRecorded(ended).open.isEmpty)
        #expect(stale.withoutRecorded([]).open.count == 2)
        var again = OutageJournal()
        let gap = again.resume(from: stale.withoutRecorded(ended), at: time(130), lostAfterSeconds: 600)
        #expect(gap.map(\.kind) == [.absent])
        let next = again.observe(state("eth0", [online.eth0]), events: [], at: time(131))
        #expect(next.records.isEmpty)
    }
}
