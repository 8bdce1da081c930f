/// A modem the agent knows of, by equipment identifier: what ModemManager last said of
/// it (nil while ModemManager is away or the modem is re-enumerating) and its recovery
/// ladder, which outlives both.
struct ModemRecord: Sendable {
    var facts: ModemFacts?
    var ladder = RecoveryLadder()
    /// Why it cannot carry data now, as last worked out (a modem in passage keeps it).
    var evidence: Reason?
    /// A bearer of it was seen connected: its data sessions are ModemManager's.
    var dataManaged = false
    /// Whether the agent keeps its bearer down for a cold backup (`standby-bearer`).
    var standby = BearerStandby.none

    /// Takes what ModemManager says now (nil: nothing, it is away or the modem is
    /// re-enumerating).
    mutating func update(_ facts: ModemFacts?) {
        self.facts = facts
        guard let facts else {
            evidence = nil
            return
        }
        if facts.bearers.contains(where: \.connected) { dataManaged = true }
        evidence = ModemEvidence.cannotCarryData(facts, dataManaged: dataManaged, previous: evidence)
    }
}

/// Cellular uplinks as modems: ModemManager's word as link-level evidence, the signal
/// as a quality mark, and the recovery ladder of a modem that is registered but whose
/// uplink is not online.
extension AgentCore {
    /// What ModemManager says now: every modem it has (none when it is not on the bus:
    /// its silence proves nothing, so the uplinks go back to what their probes say).
    public mutating func modemsChanged(_ modems: [ModemFacts], now: Instant) -> [Action] {
        let present = Set(modems.map(\.equipmentID))
        for id in modemRecords.keys where !present.contains(id) { modemRecords[id]?.update(nil) }
        for facts in modems { modemRecords[facts.equipmentID, default: ModemRecord()].update(facts) }
        var actions: [Action] = []
        for name in uplinks.keys.sorted() {
            guard let observed = uplinks[name]?.observed else { continue }
            actions += observe(observed, events: [], now: now)
        }
        return actions + reselectPrimary(now: now) + climbLadders(now: now) + dueRounds(now: now)
    }

    /// The equipment identifier of the modem that carries `name`: the configured one
    /// (`modem =`), else the modem whose connected bearer or whose port names the
    /// interface.
    func modemID(for name: InterfaceName) -> String? {
        let binding = configuration.interfaces[name]?.modem
        if case .equipment(let id)? = binding { return id }
        return ModemFacts.carrying(name, binding: binding, among: modemRecords.values.compactMap(\.facts))?.equipmentID
    }

    /// What ModemManager says now of the modem that carries `name`.
    func modemFacts(for name: InterfaceName) -> ModemFacts? {
        modemID(for: name).flatMap { modemRecords[$0]?.facts }
    }

    /// The link as the kernel shows it, unless the modem says it cannot carry data.
    func evaluateLink(_ facts: LinkFacts) -> LinkEvaluator.Result {
        let link = LinkEvaluator.evaluate(facts)
        guard case .probe = link, let id = modemID(for: facts.name), let record = modemRecords[id],
              let reason = record.evidence else { return link }
        // A bearer the agent parked is down on purpose: a backup waiting, not a fault.
        if reason == .bearerDisconnected && record.standby.isParked { return .down(reason: .standby) }
        return .down(reason: reason)
    }

    /// Feeds every modem's ladder what its uplink and the modem show now; returns the
    /// steps to take and the hook events that tell of them.
    mutating func climbLadders(now: Instant) -> [Action] {
        var actions = standbyBearerSteps(now: now)
        for name in uplinks.keys.sorted() {
            guard let uplink = uplinks[name], let id = modemID(for: name), let record = modemRecords[id],
                  let facts = record.facts else { continue }
            let registered = ModemEvidence.isRegistered(facts, evidence: record.evidence)
            // A parked bearer is no fault to recover from.
            guard let step = modemRecords[id]?.ladder.observe(online: uplink.isOnline || record.standby.isParked,
                                                              registered: registered,
                                                              at: now.monotonicMilliseconds,
                                                              settings: uplink.settings.recovery) else { continue }
            if step != .powerCycle { actions.append(.recoverModem(equipmentID: id, step)) }
            actions.append(.runHook(recoverEvent(uplink, step: step, now: now)))
        }
        return actions
    }

    /// When a ladder's next step falls due.
    var nextLadderStepMilliseconds: Int? {
        uplinks.values.compactMap { uplink in
            modemID(for: uplink.name).flatMap { modemRecords[$0]?.ladder.nextDueMilliseconds(uplink.settings.recovery) }
        }.min()
    }

    /// The figures published for the modem that carries `name`.
    func modemStatus(for name: InterfaceName) -> ModemStatus? {
        guard let id = modemID(for: name), let record = modemRecords[id], let facts = record.facts else { return nil }
        return ModemStatus(facts, recoveryStep: record.ladder.step, recoveriesTotal: record.ladder.stepsTaken)
    }
}
