/// Why the primary changed, as hooks (`UPLINK_PRIMARY_REASON`) and the log say it.
package enum PrimaryChangeReason: String, Sendable, Equatable {
    /// The first primary after start-up.
    case start
    /// The primary left `online` or vanished (a new one took over, or none is left).
    case lost
    /// A preferred uplink came back and held out its hold-down.
    case recovered
    /// The primary was degraded for a while and a healthy uplink took over.
    case degraded
    /// The primary's data plan is used up: under `at-cap = last-resort` it hands over at
    /// once to any other online uplink, under `at-cap = down` it is left altogether.
    case capped
}

/// Picks the primary uplink: the best `online` uplink by priority, with a hold-down so
/// an uplink that just recovered must stay online for a while before it takes the
/// primary role back from another online uplink. At start-up nothing has recovered:
/// whichever uplink answers first must not keep a better one waiting. No online
/// uplink, no primary.
///
/// Fail fast, recover slow: losing the primary hands over at once; taking it back
/// waits for the hold-down, which runs from the latest of "online again", "no longer
/// suppressed by flap damping" and "healthy again". A suppressed uplink becomes
/// primary only when no other uplink is online. A degraded primary hands over to a
/// clearly healthy uplink of acceptable cost once the degradation has lasted, and an
/// uplink is never taken back while it is degraded and the current one is not (and
/// of acceptable cost), so the choice does not swing back and forth.
///
/// Verify before promoting: an uplink whose last validated round is older than the
/// verify age does not take over at once; the selector names it in `toVerify` and
/// keeps the current choice until the agent has probed it (or excluded it, when the
/// probe failed, and moves on to the next one).
package struct PrimarySelector: Sendable, Equatable {
    /// One uplink as the selector sees it.
    package struct Candidate: Sendable, Equatable {
        package var name: InterfaceName
        package var kind: InterfaceKind
        package var verdict: Verdict
        /// Monotonic time from which its hold-down counts: it came online, left flap
        /// suppression or became healthy again, whichever was last.
        package var onlineSinceMilliseconds: Int
        /// It came online after a known failure (not straight from start-up's
        /// `unknown`): only such an uplink is held down.
        package var recovered: Bool
        /// Validated recently enough to take over without another probe.
        package var fresh: Bool
        /// Its verification probe failed and no full round has confirmed it since.
        package var excluded: Bool
        /// Flap damping keeps it from becoming primary while another uplink is online.
        package var suppressed = false
        /// Degraded for at least the configured time, and still shown so by that
        /// stretch's probes (or its modem's signal).
        package var degraded = false
        /// Degraded now, however recently.
        package var degradedNow = false
        /// Well below the degradation marks for at least the configured time.
        package var healthy = true
        package var metered = false
        /// Its data plan is used up (`at-cap = last-resort`): primary only while no other
        /// uplink is online.
        package var lastResort = false
        /// Its data plan is used up and `at-cap = down`: excluded (set with `excluded`),
        /// so a primary leaving for that reason hands over as `capped`, not `lost`.
        package var cappedOut = false

        package init(name: InterfaceName, kind: InterfaceKind, verdict: Verdict, onlineSinceMilliseconds: Int,
                    recovered: Bool = true, fresh: Bool = true, excluded: Bool = false) {
            self.name = name
            self.kind = kind
            self.verdict = verdict
            self.onlineSinceMilliseconds = onlineSinceMilliseconds
            self.recovered = recovered
            self.fresh = fresh
            self.excluded = excluded
        }
    }

    package private(set) var primary: InterfaceName?
    /// When a preferred uplink's hold-down ends, so the caller can wake up then.
    package private(set) var holdDownEndsMilliseconds: Int?
    /// The uplink to verify before it may become primary, if any.
    package private(set) var toVerify: InterfaceName?
    /// Why the last change happened.
    package private(set) var changeReason: PrimaryChangeReason = .start
    /// Preferred uplinks passed over because flap damping suppresses them.
    package private(set) var passedOverSuppressed: [InterfaceName] = []
    /// Preferred uplinks whose hold-down is running.
    package private(set) var heldDown: [InterfaceName] = []

    package init() {}

    /// Re-evaluates; returns true when the primary changed.
    package mutating func select(from candidates: [Candidate], policy: AgentPolicy, now: Int) -> Bool {
        holdDownEndsMilliseconds = nil
        toVerify = nil
        passedOverSuppressed = []
        heldDown = []
        let online = candidates.filter { $0.verdict == .online && !$0.excluded }
            .sorted { (Self.rank($0, policy), $0.name) < (Self.rank($1, policy), $1.name) }
        guard let current = online.first(where: { $0.name == primary }) else {
            return replaceLostPrimary(online: online, candidates: candidates)
        }
        // A primary kept only as the last resort hands over at once, whatever the order,
        // hold-down or failback, to any other online uplink (a suppressed one last).
        if current.lastResort, let other = online.first(where: { !$0.lastResort && !$0.suppressed })
            ?? online.first(where: { !$0.lastResort }) {
            return take(other, reason: .capped)
        }
        if let preferred = preferredPastHoldDown(over: current, online: online, policy: policy, now: now) {
            return take(preferred, reason: .recovered)
        }
        // A primary degraded for a while hands over to a clearly healthy uplink of
        // acceptable cost, whatever their order.
        if current.degraded, policy.avoidDegraded != .no,
           let healthy = online.first(where: { $0.name != current.name && $0.healthy && !$0.degraded
               && !$0.suppressed && !$0.lastResort && policy.avoidDegraded.allows(metered: $0.metered) }) {
            return take(healthy, reason: .degraded)
        }
        return false
    }

    /// One place for a candidate's priority: the order of `online` and failback's
    /// "preferred over the current primary" must agree.
    private static func rank(_ candidate: Candidate, _ policy: AgentPolicy) -> Int {
        policy.rank(of: candidate.name, kind: candidate.kind)
    }

    /// Losing the primary is the one change that does not wait: no hold-down, no
    /// failback setting, only verification of a stale successor.
    private mutating func replaceLostPrimary(online: [Candidate], candidates: [Candidate]) -> Bool {
        let previous = primary
        // A primary still online but over its plan (`at-cap = down`) was not lost.
        let leftReason: PrimaryChangeReason =
            candidates.contains { $0.name == previous && $0.cappedOut && $0.verdict == .online } ? .capped : .lost
        // The primary is gone or failed: the best online uplink takes over at once
        // if it is fresh (a suppressed one only when nothing else is online); a
        // stale one is verified first, and the old choice stands until then (one
        // primary change, not two).
        // A capped uplink comes after every other, a suppressed one included.
        let usable = online.filter { !$0.suppressed && !$0.lastResort }
        guard let best = usable.first ?? online.first(where: { !$0.lastResort }) ?? online.first else {
            primary = nil
            if previous != nil { changeReason = leftReason }
            return previous != nil
        }
        guard best.fresh else {
            toVerify = best.name
            return false
        }
        if !best.suppressed { passedOverSuppressed = online.prefix { $0.suppressed }.map(\.name) }
        primary = best.name
        if previous != nil {
            changeReason = leftReason
        } else {
            // No primary before: the first one, or one back after every uplink failed.
            changeReason = best.recovered ? .recovered : .start
        }
        return previous != primary
    }

    /// Failback: an uplink preferred over the current primary takes the role back only
    /// once its hold-down has passed, and the ones still held are noted (with when the
    /// first hold-down ends) so the caller can wake up then.
    private mutating func preferredPastHoldDown(over current: Candidate, online: [Candidate], policy: AgentPolicy,
                                                now: Int) -> Candidate? {
        // Judged on the degraded flags as they are now, not on how long they lasted or
        // on figures near a mark: either could flip and swing the choice back.
        let currentIsFine = !current.degradedNow && policy.avoidDegraded.allows(metered: current.metered)
        // Walk the uplinks preferred over the current primary, best first; the first
        // whose hold-down has passed takes over (after verification, if stale).
        for candidate in online where candidate.name != current.name {
            guard Self.rank(candidate, policy) < Self.rank(current, policy) else { break }
            if candidate.suppressed {
                passedOverSuppressed.append(candidate.name)
                continue
            }
            // Capped: never taken back while the current primary is online; `failback =
            // never`: an uplink that came back waits until the current primary fails.
            if candidate.lastResort || (candidate.recovered && policy.failback == .never) { continue }
            // Never back to a degraded uplink from a healthy one it would be left for.
            if candidate.degradedNow && currentIsFine && policy.avoidDegraded != .no { continue }
            let holdDown = candidate.recovered && policy.failback != .immediate ? policy.holdDownMilliseconds : 0
            let heldUntil = candidate.onlineSinceMilliseconds + holdDown
            if heldUntil <= now { return candidate }
            holdDownEndsMilliseconds = min(holdDownEndsMilliseconds ?? heldUntil, heldUntil)
            heldDown.append(candidate.name)
        }
        return nil
    }

    private mutating func take(_ candidate: Candidate, reason: PrimaryChangeReason) -> Bool {
        guard candidate.fresh else {
            toVerify = candidate.name
            return false
        }
        primary = candidate.name
        changeReason = reason
        return true
    }
}
