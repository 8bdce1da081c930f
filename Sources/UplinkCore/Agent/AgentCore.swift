/// A probe left out of light rounds over one family.
struct SidelinedProbe: Hashable, Sendable {
    var name: String
    var family: AddressFamily
}

/// The agent's decisions, free of I/O: which uplinks exist, when each is probed and
/// how (light, full or verification rounds), what each verdict is, which uplink is
/// primary, and what hooks must hear. The runtime feeds it link states, finished
/// rounds, the primary's packet counters and the time, and carries out the actions it
/// returns.
///
/// Cheap evidence first: link events and the primary's own traffic make an uplink
/// suspect at no cost; while an uplink is online and nothing is suspect a round is one
/// light probe per family; any doubt starts a full round, and only a full round (the
/// quorum of the probe set) takes an uplink out of `online`.
///
/// Where things are: each uplink's own state and transitions in `AgentUplink.swift`
/// (its round state machine in `UplinkRoundState.swift`); starting and finishing
/// rounds in `AgentCore+Rounds.swift`; the primary in `AgentCore+Primary.swift`; hook
/// events and the published state in `AgentCore+Events.swift`.
package struct AgentCore: Sendable {
    /// What the runtime must do.
    package enum Action: Sendable, Equatable {
        /// Run this round; report back with the same generation.
        case startRound(RoundPlan, generation: Int)
        case runHook(HookEvent)
        /// A decision worth a log line that no hook event carries.
        case note(AgentNote)
        /// Take a step of a modem's recovery ladder (reconnect its bearer, or reset it).
        case recoverModem(equipmentID: String, RecoveryStep)
        /// Write the data plans' file now (a new cycle, a mark crossed, a reset by hand);
        /// the runtime also writes it every `plan-save-interval` and at a stop.
        case savePlans
        /// Connect or disconnect a cold backup's data bearer (`standby-bearer = disconnected`).
        case standbyBearer(equipmentID: String, connected: Bool)
    }

    /// Time limits of rounds on an online uplink never go below these: a healthy
    /// exchange needs at least a few round trips, and Linux retransmits a lost SYN
    /// after one second.
    package static let exchangeFloorMilliseconds = 1_000
    package static let lookupFloorMilliseconds = 1_000
    /// The floor of a full round confirming that an online uplink passes nothing (a
    /// stall, a failed light or liveness round): its own round trips, when that short,
    /// tell a dead path; a probe that connects and then runs out of time earns a
    /// second look at the ceilings.
    package static let confirmationFloorMilliseconds = 250
    /// The floor of that round while the primary's new connections already go to the
    /// successor (`[flows] pinning`): long enough for a round trip that stepped up
    /// (a congested cell, bufferbloat, a satellite hop) to answer.
    package static let patientConfirmationFloorMilliseconds = 2_000

    package private(set) var configuration: Configuration
    package var policy: AgentPolicy { configuration.agent }
    var uplinks: [InterfaceName: Uplink] = [:]
    /// Byte budgets by interface name; they outlive an uplink that vanishes and comes
    /// back (a modem re-enumerating must not reset its metered day).
    var budgets: [InterfaceName: ByteBudget] = [:]
    /// Flap damping by interface name, for the same reason: a modem that flaps by
    /// re-enumerating must not start clean every time.
    var dampings: [InterfaceName: FlapDamping] = [:]
    /// Round generations grow across all uplinks for the life of the core, so a round
    /// of a vanished uplink can never match one of its successor.
    var lastGeneration = 0
    var selector = PrimarySelector()
    /// The primary of each address family, chosen the same way from the family's own
    /// verdicts: an uplink whose IPv6 is broken keeps IPv4 but not IPv6 traffic.
    var familySelectors: [AddressFamily: PrimarySelector] = [.ipv4: PrimarySelector(), .ipv6: PrimarySelector()]
    /// The last primary that vanished, with its last addresses.
    var vanishedPrimary: (name: InterfaceName, addresses: [IPAddress])?
    /// The latest time the core was told (wake-ups are only ever in the future).
    var latestMilliseconds = 0
    /// Modems by equipment identifier, from ModemManager.
    var modemRecords: [String: ModemRecord] = [:]
    /// Data plans and the local time their cycles follow (`AgentCore+Plans.swift`).
    var metering = MeteringState()
    /// Each uplink's flow mark slot, kept for the life of the core so a connection's
    /// mark never comes to mean another uplink (`AgentCore+Flows.swift`).
    var flowSlots: [InterfaceName: Int] = [:]
    /// Connections pinned to each uplink, as the runtime last counted them.
    var pinnedCounts: [InterfaceName: Int]?
    /// The number of the latest hook event (the state's `decision`).
    package internal(set) var lastDecision = 0

    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    package var primary: InterfaceName? { selector.primary }
    /// The primary of each family that has one.
    package var familyPrimaries: [AddressFamily: InterfaceName] {
        familySelectors.compactMapValues(\.primary)
    }

    package var uplinkNames: [InterfaceName] { uplinks.keys.sorted() }

    package func verdict(of name: InterfaceName) -> Assessment? { uplinks[name]?.machine.assessment }

    package func isMetered(_ name: InterfaceName) -> Bool? { uplinks[name]?.metered }

    /// Probe bytes by interface since the core started: never reset, unlike the day's
    /// count in the state (the metrics export's counter).
    package var probeBytesTotals: [InterfaceName: Int] { budgets.mapValues(\.totalBytes) }

    package func settings(of name: InterfaceName) -> ProbingSettings? { uplinks[name]?.settings }

    /// Applies a new configuration (HUP): settings and budgets change, verdicts stay.
    package mutating func reconfigure(_ configuration: Configuration) {
        self.configuration = configuration
        for name in uplinks.keys { refreshSettings(of: name) }
    }

    mutating func refreshSettings(of name: InterfaceName) {
        guard var uplink = uplinks[name] else { return }
        (uplink.metered, uplink.settings) = resolvedSettings(of: name, kind: uplink.kind,
                                                             leaseSaysMetered: uplink.leaseSaysMetered)
        budgets[name, default: ByteBudget(limitBytes: nil)].limitBytes = uplink.settings.dailyBudgetBytes
        // A shorter interval takes effect now, not after the old one ran out; and an
        // online uplink that was not probed (probe-when-online = no) may be again.
        if let last = uplink.lastRoundMilliseconds, case .probe = uplink.link, uplink.round.isIdle {
            let next = last + uplink.settings.intervalMilliseconds
            if let due = uplink.schedule.nextDueMilliseconds {
                if due > next { uplink.schedule.postpone(until: next) }
            } else if uplink.settings.probeWhenOnline {
                uplink.schedule.postpone(until: next)
            }
        }
        uplinks[name] = uplink
    }

    /// Whether an uplink is metered, and its probing settings, from the configuration.
    private func resolvedSettings(of name: InterfaceName, kind: InterfaceKind,
                                  leaseSaysMetered: Bool) -> (metered: Bool, settings: ProbingSettings) {
        let metered = configuration.isMetered(name, kind: kind, leaseSaysMetered: leaseSaysMetered)
        return (metered, roleSettings(configuration.probingSettings(for: name, kind: kind, metered: metered), of: name))
    }

    // MARK: inputs

    /// The uplinks as they are now and the link events since the last call.
    package mutating func linksChanged(uplinks current: [ObservedUplink], events: [LinkEvent], now: Instant) -> [Action] {
        var actions: [Action] = []
        let currentNames = Set(current.map(\.facts.name))
        let vanished = Set(events.compactMap { event -> InterfaceName? in
            if case .disappeared(let facts) = event { return facts.name } else { return nil }
        })
        for name in uplinks.keys.sorted() where !currentNames.contains(name) {
            actions += uplinkLeft(name, vanished: vanished.contains(name), now: now)
        }
        for observed in current {
            actions += observe(observed, events: events.filter { $0.facts.name == observed.facts.name }, now: now)
        }
        return actions + reselectPrimary(now: now) + climbLadders(now: now) + dueRounds(now: now)
    }

    /// An uplink gone from the kernel, or no longer selected as one (configuration).
    private mutating func uplinkLeft(_ name: InterfaceName, vanished: Bool, now: Instant) -> [Action] {
        guard var uplink = uplinks.removeValue(forKey: name) else { return [] }
        // Gone before the primary moved away from it: the primary event still needs
        // its addresses.
        if name == selector.primary { vanishedPrimary = (name, uplink.lastAddresses) }
        let previous = uplink.machine.verdict
        let reason: Reason = vanished ? .noSuchInterface : .notAnUplink
        guard uplink.machine.linkChanged(.down(reason: reason), now: now) else { return [] }
        return verdictChanged(&uplink, from: previous, now: now)
    }

    /// One uplink as the kernel shows it now, with the events that touched it.
    mutating func observe(_ observed: ObservedUplink, events touched: [LinkEvent], now: Instant) -> [Action] {
        let facts = observed.facts
        let name = facts.name
        let link = evaluateLink(facts)
        let (metered, settings) = resolvedSettings(of: name, kind: observed.kind, leaseSaysMetered: observed.leaseSaysMetered)
        let isNew = uplinks[name] == nil
        if isNew { assignFlowSlot(name) }
        var uplink = uplinks[name] ?? Uplink(observed: observed, link: link, metered: metered, settings: settings, now: now)
        uplink.observed = observed
        uplink.kind = observed.kind
        uplink.index = facts.index
        uplink.leaseSaysMetered = observed.leaseSaysMetered
        uplink.metered = metered
        uplink.settings = settings
        budgets[name, default: ByteBudget(limitBytes: nil)].limitBytes = settings.dailyBudgetBytes
        let previousLink = uplink.link
        uplink.link = link
        uplink.network = UplinkNetwork(facts: facts, dnsServers: uplink.network.dnsServers)
        if !uplink.network.addresses.isEmpty { uplink.lastAddresses = uplink.network.addresses.map(\.address) }
        var actions: [Action] = []
        let previous = uplink.machine.verdict
        if uplink.machine.linkChanged(link, now: now) {
            actions = verdictChanged(&uplink, from: previous, now: now)
        }
        switch link {
        case .down:
            uplink.linkWentDown()
        case .probe:
            if isNew || previousLink != link || touched.contains(where: AgentCore.canChangeAnswer) {
                uplink.linkChanged(now: now)
            } else if !touched.isEmpty {
                uplink.answers.clear()
                requestFullRound(&uplink, .linkTouched, now: now)
            }
        }
        uplink.quality.signalChanged(rsrpDBm: modemFacts(for: name)?.signal.rsrpDBm, thresholds: policy.quality, at: now)
        uplinks[name] = uplink
        return actions
    }

    /// Probe an uplink at once with a full round, outside its schedule (after a
    /// portal-login hook, say). Allowed over a spent budget, like a link event.
    package mutating func probeNow(_ name: InterfaceName, now: Instant) -> [Action] {
        guard var uplink = uplinks[name], case .probe = uplink.link else { return [] }
        requestFullRound(&uplink, .hookFinished, now: now)
        uplink.answers.clear()
        uplinks[name] = uplink
        return dueRounds(now: now)
    }

    /// The uplink whose packet counters the runtime should sample, and when: the
    /// primary, while online, with stall detection on.
    package func trafficSampling() -> (interface: InterfaceName, delayMilliseconds: Int)? {
        guard let primary = selector.primary, let uplink = uplinks[primary], uplink.isOnline,
              uplink.settings.stallWindowMilliseconds != nil else { return nil }
        return (primary, uplink.traffic.monitor.nextSampleMilliseconds)
    }

    /// The primary's packet counters, sampled. A stall (packets leaving with nothing
    /// back for the window) starts a full round at once, with a `.stalled` note; answered
    /// traffic postpones light rounds.
    package mutating func trafficSampled(_ name: InterfaceName, receivedPackets: UInt64, transmittedPackets: UInt64,
                                        now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        guard name == selector.primary, var uplink = uplinks[name], uplink.isOnline,
              let window = uplink.settings.stallWindowMilliseconds else { return [] }
        // Our own probes show in the counters too: what moved while a round ran since
        // the last sample is neither a stall (a failing round raises its own doubt) nor
        // traffic that vouches for the uplink.
        let ours = !uplink.round.isIdle
            || (uplink.lastRoundMilliseconds ?? Int.min) >= (uplink.traffic.monitor.lastSampledMilliseconds ?? Int.min)
        if ours {
            uplink.traffic.monitor.excuse(receivedPackets: receivedPackets, transmittedPackets: transmittedPackets, at: at)
            uplinks[name] = uplink
            return []
        }
        var actions: [Action] = []
        let quick = TrafficMonitor.QuickStall.of(uplink.figures, windowMilliseconds: window)
        let lone = TrafficMonitor.LonePacket.of(uplink.figures, windowMilliseconds: window)
        switch uplink.traffic.monitor.sample(receivedPackets: receivedPackets, transmittedPackets: transmittedPackets,
                                             at: at, windowMilliseconds: window, quick: quick, lone: lone) {
        case .flowing(answered: true):
            uplink.traffic.answered(at: now)
        case .stalled where !uplink.traffic.alarmsPaused(at: now) && uplink.doubt == nil:
            let rule = uplink.traffic.monitor.lastAlarmRule
            actions = stallAlarm(&uplink, windowMilliseconds: rule == .quick ? quick?.windowMilliseconds ?? window : window,
                                 now: now)
        case .stalled:
            // Not acted on now (paused, or a round pending): keep reporting it.
            uplink.traffic.monitor.rearm()
        case .lonePacket where !uplink.traffic.alarmsPaused(at: now, rule: .lonePacket) && uplink.doubt == nil:
            actions = stallAlarm(&uplink, windowMilliseconds: lone?.windowMilliseconds ?? window, now: now)
        default:
            break
        }
        uplinks[name] = uplink
        return actions.isEmpty ? [] : actions + dueRounds(now: now)
    }

    /// The primary's traffic raised an alarm that is acted on: a confirming full round,
    /// and the note that says which rule saw what.
    /// A lone packet on a metered primary is checked by its next light round, now (one
    /// probe, not the set): that rule's false alarms must stay cheap where bytes cost.
    private mutating func stallAlarm(_ uplink: inout Uplink, windowMilliseconds: Int, now: Instant) -> [Action] {
        let evidence = uplink.traffic.monitor.stallEvidence(at: now.monotonicMilliseconds, windowMilliseconds: windowMilliseconds)
        uplink.traffic.alarmRaised(evidence.rule)
        switch evidence.rule {
        case .lonePacket where uplink.metered:
            uplink.traffic.lightCheckPending = true
            uplink.schedule.probeNow(at: now.monotonicMilliseconds, settings: uplink.settings)
        case .lonePacket:
            requestFullRound(&uplink, .lonePacket, now: now)
        case .window, .quick:
            requestFullRound(&uplink, .stallAlarm, now: now)
        }
        return [.note(.stalled(uplink.name, evidence))]
    }

    /// Stall alarms acted on since start, per uplink and rule (the metrics export).
    package var stallAlarmTotals: [InterfaceName: [StallRule: Int]] {
        uplinks.compactMapValues { $0.traffic.alarms.isEmpty ? nil : $0.traffic.alarms }
    }

    /// Time passed: start due rounds, end hold-downs, climb recovery ladders.
    package mutating func tick(now: Instant) -> [Action] {
        stopAwaitingLateSteps(now: now) + reselectPrimary(now: now) + climbLadders(now: now) + dueRounds(now: now)
    }

    /// When the runtime must call `tick` next (monotonic milliseconds), if ever.
    package func nextWakeMilliseconds() -> Int? {
        var wakes = ([selector] + familySelectors.values).compactMap(\.holdDownEndsMilliseconds)
        wakes += dampings.values.compactMap { $0.releaseMilliseconds(settings: policy.damping) }
        // A degraded primary's degradation, or a backup's health while the primary is
        // degraded, becomes lasting: the choice may change then.
        let primaryDegraded = selector.primary.flatMap { uplinks[$0]?.quality.degraded } ?? false
        for uplink in uplinks.values where uplink.isOnline && primaryDegraded
            && (uplink.name == selector.primary || !uplink.quality.degraded) {
            let settled = uplink.quality.sinceMilliseconds + policy.degradedForMilliseconds
            if settled > latestMilliseconds { wakes.append(settled) }
        }
        wakes += uplinks.values.filter { $0.round.isIdle && !isResting($0) }.compactMap(nextDueMilliseconds)
        if let standby = nextStandbyWakeMilliseconds { wakes.append(standby) }
        if let ladder = nextLadderStepMilliseconds { wakes.append(ladder) }
        return wakes.min()
    }

    /// Link events after which a probe can give a different answer.
    static func canChangeAnswer(_ event: LinkEvent) -> Bool {
        switch event {
        case .appeared, .renamed, .addressAdded, .defaultRouteAdded: return true
        case .adminChanged(let facts): return facts.adminUp
        case .carrierChanged(let facts): return facts.carrier
        case .disappeared, .addressRemoved, .defaultRouteRemoved: return false
        }
    }
}
