/// The primaries, overall and per family, before and after an event.
struct PrimaryTransition: Sendable {
    struct Side: Sendable {
        var overall: InterfaceName?
        var families: [AddressFamily: InterfaceName]
    }

    var before: Side
    var after: Side

    static func unchanged(_ side: Side) -> PrimaryTransition {
        PrimaryTransition(before: side, after: side)
    }
}

/// What the core tells hooks and readers of the state: every hook event is built by one
/// function from the uplink it describes (see `HookEvent.Kind` for which one), so every
/// kind carries the same facts by the same rules; only the primaries and the uplink
/// given up differ by kind.
extension AgentCore {
    private var primariesNow: PrimaryTransition.Side {
        PrimaryTransition.Side(overall: selector.primary, families: familyPrimaries)
    }

    /// The one builder of hook events.
    private func hookEvent(_ kind: HookEvent.Kind, describing name: InterfaceName?, _ uplink: Uplink?,
                           otherwise fallback: Assessment, previousVerdict: Verdict? = nil,
                           primaries: PrimaryTransition, givenUpAddresses: [IPAddress], now: Instant) -> HookEvent {
        let assessment = uplink?.machine.assessment ?? fallback
        // A portal URL is a page to open only while the uplink is captive.
        let captive = assessment.verdict == .captive
        var event = HookEvent(kind: kind, interface: name, interfaceKind: uplink?.kind ?? .other,
                              verdict: assessment.verdict, previousVerdict: previousVerdict ?? assessment.verdict,
                              reason: assessment.reason, portalURL: captive ? assessment.portalURL : nil,
                              primary: primaries.after.overall, previousPrimary: primaries.before.overall,
                              wallSeconds: now.wallSeconds)
        event.portalIsWISPrLogin = captive && assessment.portalIsWISPrLogin
        event.network = uplink?.network ?? UplinkNetwork()
        event.familyPrimaries = primaries.after.families
        event.previousFamilyPrimaries = primaries.before.families
        event.previousAddresses = givenUpAddresses
        event.routing = policy.routing
        // A gone uplink (a plan event for a removed device) is still told with its
        // modem and plan, as the state last had them.
        event.uplink = uplink.map { status(of: $0, now: now) } ?? name.map {
            UplinkStatus(interface: $0, kind: event.interfaceKind, verdict: assessment.verdict, reason: assessment.reason,
                         sinceWallSeconds: now.wallSeconds, modem: modemStatus(for: $0), plan: planStatus(for: $0))
        }
        return event
    }

    func verdictEvent(_ uplink: Uplink, previous: Verdict, now: Instant) -> HookEvent {
        hookEvent(.verdict, describing: uplink.name, uplink, otherwise: uplink.machine.assessment, previousVerdict: previous,
                  primaries: .unchanged(primariesNow), givenUpAddresses: uplink.lastAddresses, now: now)
    }

    /// A step of the modem's recovery ladder, for a site script (the power cycle) and
    /// for the record.
    func recoverEvent(_ uplink: Uplink, step: RecoveryStep, now: Instant) -> HookEvent {
        var event = hookEvent(.recover, describing: uplink.name, uplink, otherwise: uplink.machine.assessment,
                              primaries: .unchanged(primariesNow), givenUpAddresses: [], now: now)
        event.recoveryStep = step
        return event
    }

    /// A data plan crossed a mark or began a new cycle. The uplink may be gone (the
    /// reading of a removed device can cross a mark).
    func planEvent(_ name: InterfaceName, _ threshold: PlanThreshold, now: Instant) -> HookEvent {
        var event = hookEvent(.plan, describing: name, uplinks[name], otherwise: Assessment(.down, reason: .noSuchInterface),
                              primaries: .unchanged(primariesNow), givenUpAddresses: [], now: now)
        event.planThreshold = threshold
        return event
    }

    /// The primary moved: the event describes the new primary, or the old one when none
    /// is left (it may have vanished altogether); nil when there was none either.
    func primaryEvent(_ transition: PrimaryTransition, reason: PrimaryChangeReason?, now: Instant) -> HookEvent? {
        guard let name = transition.after.overall ?? transition.before.overall else { return nil }
        // The uplink given up: its addresses as last seen, for flushing its NATed
        // connections after the addresses themselves are gone.
        func lastAddresses(of name: InterfaceName) -> [IPAddress] {
            uplinks[name]?.lastAddresses ?? (vanishedPrimary?.name == name ? vanishedPrimary!.addresses : [])
        }
        var event = hookEvent(.primary, describing: name, uplinks[name],
                              otherwise: Assessment(.down, reason: .noSuchInterface), primaries: transition,
                              givenUpAddresses: transition.before.overall.map(lastAddresses) ?? [], now: now)
        event.primaryReason = reason
        if let old = transition.before.overall, let proven = uplinks[old]?.lastValidatedMilliseconds {
            event.previousPrimaryProvenMillisecondsAgo = max(0, now.monotonicMilliseconds - proven)
        }
        for family in AddressFamily.allCases {
            guard let given = transition.before.families[family], given != transition.after.families[family] else { continue }
            event.previousFamilyAddresses[family] = lastAddresses(of: given).filter { $0.family == family }
        }
        return event
    }

    /// The last event, when the agent stops: it describes the primary (hooks may undo
    /// what they did for it), and names no interface when there was none.
    package func stopEvent(now: Instant) -> HookEvent {
        let primary = selector.primary
        let uplink = primary.flatMap { uplinks[$0] }
        return hookEvent(.stop, describing: primary, uplink, otherwise: Assessment(.unknown, reason: .stopping),
                         primaries: PrimaryTransition(before: primariesNow, after: .init(overall: nil, families: [:])),
                         givenUpAddresses: uplink?.lastAddresses ?? [], now: now)
    }

    /// Hooks make the routes match the primaries again: uplinkd's routing entries
    /// changed behind its back. Described as a primary event whose primaries did not
    /// change (the primary, or no interface when there is none).
    package func repairEvent(now: Instant) -> HookEvent {
        let primary = selector.primary
        return hookEvent(.repair, describing: primary, primary.flatMap { uplinks[$0] },
                         otherwise: Assessment(.unknown, reason: .noSuchInterface),
                         primaries: .unchanged(primariesNow), givenUpAddresses: [], now: now)
    }

    /// A site outage ended (the journal closed its record): told once per outage,
    /// describing the primary that ended it.
    package func outageEvent(_ record: JournalRecord, now: Instant) -> HookEvent {
        let primary = selector.primary
        var event = hookEvent(.outage, describing: primary, primary.flatMap { uplinks[$0] },
                              otherwise: Assessment(.unknown, reason: .noSuchInterface),
                              primaries: .unchanged(primariesNow), givenUpAddresses: [], now: now)
        event.outage = record
        return event
    }

    /// Gives an event the next decision number, as the adapter takes it to the hooks.
    package mutating func numbered(_ event: HookEvent) -> HookEvent {
        lastDecision += 1
        var numbered = event
        numbered.decision = lastDecision
        return numbered
    }

    // MARK: the published state

    /// The published state; `hooksDone` is the adapter's to say (it runs the hooks):
    /// `hooksDone(lastDecision)`, as `HookQueue.caughtUp` tells.
    package func state(now: Instant, pid: Int, stopped: Bool = false, hooksDone: (Int) -> Int = { $0 }) -> AgentState {
        var state = AgentState(primary: selector.primary, uplinks: uplinks.keys.sorted().map { status(of: uplinks[$0]!, now: now) },
                               writtenWallSeconds: now.wallSeconds, pid: pid, stopped: stopped, familyPrimaries: familyPrimaries)
        state.decision = lastDecision
        state.hooksDone = hooksDone(lastDecision)
        if let plan = flowPlan(now: now) {
            state.spread = plan.spreadText
            state.provisional = plan.provisional
        }
        return state
    }

    private func status(of uplink: Uplink, now: Instant) -> UplinkStatus {
        let at = now.monotonicMilliseconds
        let name = uplink.name
        let assessment = uplink.machine.assessment
        let budget = budgets[name] ?? ByteBudget(limitBytes: nil)
        let families = uplink.machine.families
        return UplinkStatus(
            interface: name, kind: uplink.kind, verdict: assessment.verdict, reason: assessment.reason,
            sinceWallSeconds: uplink.machine.since.wallSeconds,
            ipv4: families[.ipv4]?.verdict, ipv6: families[.ipv6]?.verdict,
            bytesToday: budget.spentBytes(at: at), budgetBytes: budget.limitBytes,
            budgetExhausted: budget.isExhausted(at: at),
            portalURL: assessment.verdict == .captive ? assessment.portalURL : nil,
            ipv4Reason: families[.ipv4]?.reason, ipv6Reason: families[.ipv6]?.reason,
            dnsSource: uplink.dnsSource, metered: uplink.metered,
            quality: UplinkQualityStatus(
                figures: uplink.figures ?? QualityFigures(), degraded: uplink.quality.degraded,
                flapPenalty: Int((dampings[name]?.penalty(at: at, settings: policy.damping) ?? 0).rounded()),
                suppressed: dampings[name]?.suppressed ?? false),
            session: uplink.session ?? CaptivePortalSession(), modem: modemStatus(for: name),
            plan: planStatus(for: name), standby: uplink.settings.metering.standby,
            pinnedConnections: configuration.flows.pinning ? pinnedCounts?[name] ?? pinnedCounts.map { _ in 0 } : nil)
    }
}
