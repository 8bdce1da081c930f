/// Data plans: every byte an uplink with a plan carries, counted per billing cycle from
/// its link statistics (the runtime reads them every few seconds and when a device is
/// removed), hook events at each mark, and what the cap does to the choice of primary.
/// The ledgers are kept by interface name, like budgets: a modem whose interface comes
/// and goes keeps its plan.
extension AgentCore {
    /// The gateway's local time: billing cycles turn at its midnights. The runtime sets
    /// the system's (UTC until then).
    package var localTime: LocalTime {
        get { metering.localTime }
        set { metering.localTime = newValue }
    }

    var ledgers: [InterfaceName: PlanLedger] {
        get { metering.ledgers }
        set { metering.ledgers = newValue }
    }

    var knownPlanSettings: [InterfaceName: PlanSettings] {
        get { metering.knownPlanSettings }
        set { metering.knownPlanSettings = newValue }
    }

    /// The uplinks whose counters the runtime must read: those with a plan.
    package var accountedInterfaces: [InterfaceName] {
        uplinks.values.filter { $0.settings.metering.plan != nil }.map(\.name).sorted()
    }

    /// The plans as they stand, for the plan file.
    package var planLedgers: [InterfaceName: PlanLedger] { ledgers }

    /// Plans read back from the plan file at start: counting goes on from their
    /// baselines. A plan whose cycle ended meanwhile gives way at the first reading.
    package mutating func restorePlans(_ saved: [InterfaceName: PlanLedger]) {
        for (name, ledger) in saved where ledgers[name] == nil { ledgers[name] = ledger }
    }

    /// Counter readings, by interface (a removed device's last one included). Returns
    /// the plan events, a request to save the plans when something worth keeping at
    /// once happened (a new cycle, a mark), and what the cap changed in the primary.
    /// `final`: the agent's last reading before it stops: its bytes are counted and
    /// nothing else (marks it crosses are told at the next start, whose hooks can run).
    package mutating func countersRead(_ readings: [InterfaceName: CounterReading], now: Instant,
                                      final: Bool = false) -> [Action] {
        if final {
            for (name, reading) in readings where ledgers[name] != nil && planSettings(of: name) != nil {
                ledgers[name]!.count(reading)
            }
            return []
        }
        var actions: [Action] = []
        for name in readings.keys.sorted() {
            guard let settings = planSettings(of: name) else { continue }
            guard var ledger = ledgers[name] else {
                // Counting begins: this reading is the baseline, nothing is counted yet.
                var ledger = PlanLedger(startingAt: now.wallSeconds, settings, zone: localTime)
                _ = ledger.account.take(readings[name]!)
                ledgers[name] = ledger
                actions.append(.savePlans)
                continue
            }
            let told = ledger.take(readings[name]!, settings, zone: localTime, nowWallSeconds: now.wallSeconds)
            ledgers[name] = ledger
            actions += told.map { .runHook(planEvent(name, $0, now: now)) }
        }
        actions += rollOverIdlePlans(now: now)
        if actions.contains(where: { if case .runHook = $0 { return true } else { return false } }) {
            actions.append(.savePlans)
        }
        return actions + reselectPrimary(now: now)
    }

    /// Cycles that ended for plans without a reading now (an uplink gone): a plan is a
    /// matter of the calendar too.
    private mutating func rollOverIdlePlans(now: Instant) -> [Action] {
        var actions: [Action] = []
        for name in ledgers.keys.sorted() {
            guard uplinks[name] == nil, let settings = knownPlanSettings[name] else { continue }
            let told = ledgers[name]!.refresh(settings, zone: localTime, nowWallSeconds: now.wallSeconds)
            actions += told.map { .runHook(planEvent(name, $0, now: now)) }
        }
        return actions
    }

    /// Starts a new cycle now (`uplinkd plan --reset`, when the carrier's cycle differs):
    /// nothing used, no mark told; it ends at the next regular start. Nil when the
    /// uplink has no plan.
    package mutating func resetPlan(_ name: InterfaceName, now: Instant) -> [Action]? {
        guard let settings = planSettings(of: name) else { return nil }
        var ledger = ledgers[name] ?? PlanLedger(startingAt: now.wallSeconds, settings, zone: localTime)
        let told = ledger.reset(settings, zone: localTime, nowWallSeconds: now.wallSeconds)
        ledgers[name] = ledger
        return told.map { .runHook(planEvent(name, $0, now: now)) } + [.savePlans] + reselectPrimary(now: now)
    }

    /// The plan settings of an uplink, present or last seen (a vanished modem's
    /// removal reading still counts). Nil: not counted.
    mutating func planSettings(of name: InterfaceName) -> PlanSettings? {
        if let uplink = uplinks[name] {
            let plan = uplink.settings.metering.plan
            knownPlanSettings[name] = plan
            // A plan turned off for an uplink present: its ledger goes.
            if plan == nil { ledgers[name] = nil }
            return plan
        }
        return knownPlanSettings[name]
    }

    /// The plan as published, when the uplink has one and counting began.
    func planStatus(for name: InterfaceName) -> PlanStatus? {
        guard let ledger = ledgers[name],
              let settings = uplinks[name]?.settings.metering.plan ?? knownPlanSettings[name] else { return nil }
        return PlanStatus(ledger, settings)
    }

    /// What the cap makes of an uplink as a candidate for primary.
    func capRole(of uplink: Uplink) -> (lastResort: Bool, excluded: Bool) {
        guard let settings = uplink.settings.metering.plan, let ledger = ledgers[uplink.name],
              ledger.capped(settings) else { return (false, false) }
        switch settings.atCap {
        case .lastResort: return (true, false)
        case .down: return (false, true)
        case .keep: return (false, false)
        }
    }
}

/// The core's metered-uplink bookkeeping, kept by interface name.
struct MeteringState: Sendable {
    var localTime = LocalTime.utc
    var ledgers: [InterfaceName: PlanLedger] = [:]
    /// The plan settings each uplink had when last seen, for a plan whose uplink is gone.
    var knownPlanSettings: [InterfaceName: PlanSettings] = [:]
}
