/// What hooks hear of a data plan (`UPLINK_PLAN_THRESHOLD`).
package enum PlanThreshold: Sendable, Equatable, CustomStringConvertible {
    /// A `plan-warn` mark, or 100: the cap.
    case mark(Int)
    /// A new cycle began: on its day, or by hand (`uplinkd plan --reset`).
    case newCycle

    package var description: String {
        switch self {
        case .mark(let percent): return String(percent)
        case .newCycle: return "new-cycle"
        }
    }
}

/// One uplink's data plan in its current cycle: when the cycle began and ends, what
/// went each way, which marks hooks were told of, and the counter baseline the next
/// reading is compared with. Persisted as a whole (`PlanFileFormat`): the count and
/// the baseline are always written together, so a restart neither loses nor repeats
/// a byte the counters still hold.
package struct PlanLedger: Sendable, Equatable {
    package var cycleStartWallSeconds: Int
    /// Where the cycle ends: worked out again from its start whenever the settings may
    /// have changed (`refresh`), never stored.
    package private(set) var cycleEndWallSeconds: Int
    package var used: ByteCounts
    /// Marks (percent) crossed and told this cycle.
    package var marksTold: [Int]
    package var account: TrafficAccount

    package init(cycleStartWallSeconds: Int, used: ByteCounts = ByteCounts(), marksTold: [Int] = [],
                account: TrafficAccount = TrafficAccount()) {
        self.cycleStartWallSeconds = cycleStartWallSeconds
        cycleEndWallSeconds = cycleStartWallSeconds
        self.used = used
        self.marksTold = marksTold
        self.account = account
    }

    /// How far the clock may go back before a cycle's start without moving the cycle.
    static let clockSlackSeconds = 86_400

    /// A plan counted from now: the cycle that contains this moment, nothing used.
    package init(startingAt wallSeconds: Int, _ settings: PlanSettings, zone: LocalTime) {
        self.init(cycleStartWallSeconds: BillingCycle.start(containing: wallSeconds, settings, zone: zone))
        cycleEndWallSeconds = BillingCycle.end(after: cycleStartWallSeconds, settings, zone: zone)
    }

    /// Whether the cap is reached.
    package func capped(_ settings: PlanSettings) -> Bool {
        settings.limitBytes.map { used.total >= $0 } ?? false
    }

    /// The cycle's end from its start under these settings; a cycle over by now gives
    /// way to the one this moment falls in (several may have passed while the agent
    /// was stopped). A clock set back a little before the cycle's start changes
    /// nothing (the cycle ends only when the clock passes its end); set back by more
    /// than a day, the cycle began under a clock that was wrong (a gateway's clock
    /// ahead until its first time sync): it is moved to the cycle this moment falls
    /// in, with what it counted, so it ends when that one does.
    package mutating func refresh(_ settings: PlanSettings, zone: LocalTime, nowWallSeconds: Int) -> [PlanThreshold] {
        if nowWallSeconds < cycleStartWallSeconds - PlanLedger.clockSlackSeconds {
            cycleStartWallSeconds = BillingCycle.start(containing: nowWallSeconds, settings, zone: zone)
        }
        cycleEndWallSeconds = BillingCycle.end(after: cycleStartWallSeconds, settings, zone: zone)
        guard nowWallSeconds >= cycleEndWallSeconds else { return [] }
        begin(at: BillingCycle.start(containing: nowWallSeconds, settings, zone: zone), settings, zone: zone)
        return [.newCycle]
    }

    /// A new cycle begun by hand, now: it runs to the next regular start.
    package mutating func reset(_ settings: PlanSettings, zone: LocalTime, nowWallSeconds: Int) -> [PlanThreshold] {
        begin(at: nowWallSeconds, settings, zone: zone)
        return [.newCycle]
    }

    private mutating func begin(at start: Int, _ settings: PlanSettings, zone: LocalTime) {
        cycleStartWallSeconds = start
        cycleEndWallSeconds = BillingCycle.end(after: start, settings, zone: zone)
        used = ByteCounts()
        marksTold = []
    }

    /// Takes a counter reading: a cycle that ended first gives way (what the reading
    /// adds then counts in the new one: the readings come every few seconds, and
    /// counting a boundary's bytes in the cycle that follows never lets a cap be
    /// passed unseen), then the bytes are added and each mark newly crossed is told,
    /// once a cycle.
    package mutating func take(_ reading: CounterReading, _ settings: PlanSettings, zone: LocalTime,
                              nowWallSeconds: Int) -> [PlanThreshold] {
        var told = refresh(settings, zone: zone, nowWallSeconds: nowWallSeconds)
        used = used + account.take(reading)
        told += crossedMarks(settings)
        return told
    }

    /// Takes a reading's bytes, and nothing else: no cycle ends, no mark is told.
    package mutating func count(_ reading: CounterReading) {
        used = used + account.take(reading)
    }

    /// Marks reached and not yet told, ascending; they count as told from now.
    mutating func crossedMarks(_ settings: PlanSettings) -> [PlanThreshold] {
        guard let percent = settings.percent(of: used.total) else { return [] }
        let crossed = settings.marks.filter { $0 <= percent && !marksTold.contains($0) }
        marksTold = (marksTold + crossed).sorted()
        return crossed.map(PlanThreshold.mark)
    }
}

/// One uplink's data plan as published (status, state file, textfile, hooks).
package struct PlanStatus: Sendable, Equatable {
    package var received: Int
    package var sent: Int
    /// Nil: counted without a limit.
    package var limitBytes: Int?
    package var cycleStartWallSeconds: Int
    package var cycleEndWallSeconds: Int
    package var atCap: AtCap
    package var capped: Bool

    package init(received: Int, sent: Int, limitBytes: Int?, cycleStartWallSeconds: Int, cycleEndWallSeconds: Int,
                atCap: AtCap = .lastResort, capped: Bool = false) {
        self.received = received
        self.sent = sent
        self.limitBytes = limitBytes
        self.cycleStartWallSeconds = cycleStartWallSeconds
        self.cycleEndWallSeconds = cycleEndWallSeconds
        self.atCap = atCap
        self.capped = capped
    }

    package init(_ ledger: PlanLedger, _ settings: PlanSettings) {
        self.init(received: ledger.used.received, sent: ledger.used.transmitted, limitBytes: settings.limitBytes,
                  cycleStartWallSeconds: ledger.cycleStartWallSeconds, cycleEndWallSeconds: ledger.cycleEndWallSeconds,
                  atCap: settings.atCap, capped: ledger.capped(settings))
    }

    package var usedBytes: Int { received + sent }

    /// The whole percentage of the limit used; nil without a limit.
    package var percent: Int? {
        PlanSettings(limitBytes: limitBytes).percent(of: usedBytes)
    }

    package var json: JSONValue {
        .object([
            ("used_bytes", .int(usedBytes)),
            ("received_bytes", .int(received)),
            ("sent_bytes", .int(sent)),
            ("limit_bytes", limitBytes.map(JSONValue.int) ?? .null),
            ("percent", percent.map(JSONValue.int) ?? .null),
            ("cycle_start", .int(cycleStartWallSeconds)),
            ("cycle_end", .int(cycleEndWallSeconds)),
            ("capped", .bool(capped)),
            ("at_cap", .string(atCap.rawValue)),
        ])
    }
}
