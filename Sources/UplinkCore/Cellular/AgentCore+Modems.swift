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

    /// A recovery step the agent took, awaited until a bearer connects again or the
    /// deadline (monotonic milliseconds) passes. Meanwhile the modem's passage through
    /// disabled, searching and disconnected is the step's own doing, not news: the
    /// uplink keeps its word instead of flapping down and back (a modem just back
    /// from a reset always says "disabled" before the agent connects it).
    var awaitedStep: AwaitedStep?

    /// A recovery step in progress. `tookEffect`: the modem was seen without a connected
    /// bearer (or gone) since the step was taken; only a bearer connected after that
    /// answers it, since ModemManager's first word after a Disconnect call may still
    /// show the old bearer connected.
    struct AwaitedStep: Sendable {
        var step: RecoveryStep
        var untilMilliseconds: Int
        var tookEffect = false
    }

    /// How long a step may take before what the modem says counts again: a reconnect
    /// is one Simple.Connect; a reset also waits for the modem to come back (the
    /// adapter waits up to 5 min for that).
    static func awaitMilliseconds(_ step: RecoveryStep) -> Int {
        step == .reset ? 360_000 : 90_000
    }

    /// Takes what ModemManager says now (nil: nothing, it is away or the modem is
    /// re-enumerating). Returns true when this answers an awaited step: a bearer is
    /// connected again.
    mutating func update(_ facts: ModemFacts?, now: Int) -> Bool {
        self.facts = facts
        if let awaited = awaitedStep, now >= awaited.untilMilliseconds { awaitedStep = nil }
        guard let facts else {
            if awaitedStep == nil { evidence = nil }
            awaitedStep?.tookEffect = true
            return false
        }
        let connected = facts.bearers.contains(where: \.connected)
        if connected { dataManaged = true }
        let word = ModemEvidence.cannotCarryData(facts, dataManaged: dataManaged, previous: evidence)
        guard let awaited = awaitedStep else {
            evidence = word
            return false
        }
        if !connected { awaitedStep?.tookEffect = true }
        if connected && awaited.tookEffect {
            awaitedStep = nil
            evidence = word
            return true
        }
        // A fault the step did not cause is news even now.
        if let word, word.isModemFault { evidence = word }
        return false
    }

    /// The awaited step's deadline passed: what the modem says counts again.
    mutating func stopAwaiting() {
        awaitedStep = nil
        evidence = facts.flatMap { ModemEvidence.cannotCarryData($0, dataManaged: dataManaged, previous: evidence) }
    }
}

/// Cellular uplinks as modems: ModemManager's word as link-level evidence, the signal
/// as a quality mark, and the recovery ladder of a modem that is registered but whose
/// uplink is not online.
extension AgentCore {
    /// What ModemManager says now: every modem it has (none when it is not on the bus:
    /// its silence proves nothing, so the uplinks go back to what their probes say).
    package mutating func modemsChanged(_ modems: [ModemFacts], now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        let present = Set(modems.map(\.equipmentID))
        var answered: Set<String> = []
        for id in modemRecords.keys where !present.contains(id) { _ = modemRecords[id]?.update(nil, now: at) }
        for facts in modems where modemRecords[facts.equipmentID, default: ModemRecord()].update(facts, now: at) {
            answered.insert(facts.equipmentID)
        }
        let actions = observeModemUplinks(now: now)
        // A recovery step connected the modem again: whatever the uplink's probes said
        // before, a full round now says whether data flows, and decides alone.
        for name in uplinks.keys.sorted() {
            guard let id = modemID(for: name), answered.contains(id), var uplink = uplinks[name] else { continue }
            uplink.machine.pathRenewed()
            requestFullRound(&uplink, .modemReconnected, now: now)
            uplinks[name] = uplink
        }
        return actions + reselectPrimary(now: now) + climbLadders(now: now) + dueRounds(now: now)
    }

    /// Whether ModemManager is worth following now: `modemmanager = yes`, or an uplink
    /// whose modem's word counts (`ModemSettings.wantsModem`).
    package var wantsModems: Bool {
        let settings = configuration.agent.modems
        if settings.use == .always { return true }
        return uplinks.contains { name, uplink in
            settings.wantsModem(kind: uplink.kind, binding: configuration.interfaces[name]?.modem)
        }
    }

    /// Every uplink looked at again with the modems' current word.
    private mutating func observeModemUplinks(now: Instant) -> [Action] {
        var actions: [Action] = []
        for name in uplinks.keys.sorted() {
            guard let observed = uplinks[name]?.observed else { continue }
            actions += observe(observed, events: [], now: now)
        }
        return actions
    }

    /// Recovery steps whose deadline passed unanswered: the modem's word counts again.
    mutating func stopAwaitingLateSteps(now: Instant) -> [Action] {
        let late = modemRecords.filter { $0.value.awaitedStep.map { now.monotonicMilliseconds >= $0.untilMilliseconds } ?? false }
        guard !late.isEmpty else { return [] }
        for id in late.keys { modemRecords[id]?.stopAwaiting() }
        return observeModemUplinks(now: now)
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
            if step != .powerCycle {
                actions.append(.recoverModem(equipmentID: id, step))
                modemRecords[id]?.awaitedStep = ModemRecord.AwaitedStep(step: step, untilMilliseconds: now.monotonicMilliseconds + ModemRecord.awaitMilliseconds(step))
                // A round running now saw the path before the step: its answer is stale.
                uplinks[name]?.recoveryStepTaken()
            }
            actions.append(.runHook(recoverEvent(uplink, step: step, now: now)))
        }
        return actions
    }

    /// When a ladder's next step falls due.
    var nextLadderStepMilliseconds: Int? {
        let steps = uplinks.values.compactMap { uplink in
            modemID(for: uplink.name).flatMap { modemRecords[$0]?.ladder.nextDueMilliseconds(uplink.settings.recovery) }
        }
        return (steps + modemRecords.values.compactMap(\.awaitedStep?.untilMilliseconds)).min()
    }

    /// The figures published for the modem that carries `name`.
    func modemStatus(for name: InterfaceName) -> ModemStatus? {
        guard let id = modemID(for: name), let record = modemRecords[id], let facts = record.facts else { return nil }
        return ModemStatus(facts, recoveryStep: record.ladder.step, recoveriesTotal: record.ladder.stepsTaken)
    }
}
