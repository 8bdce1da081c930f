/// Picks the primary uplink: the best `online` uplink by priority, with a hold-down so
/// an uplink that just recovered must stay online for a while before it takes the
/// primary role back from another online uplink. At start-up nothing has recovered:
/// whichever uplink answers first must not keep a better one waiting. No online
/// uplink, no primary.
///
/// Verify before promoting: an uplink whose last validated round is older than the
/// verify age does not take over at once; the selector names it in `toVerify` and
/// keeps the current choice until the agent has probed it (or excluded it, when the
/// probe failed, and moves on to the next one).
public struct PrimarySelector: Sendable, Equatable {
    /// One uplink as the selector sees it.
    public struct Candidate: Sendable, Equatable {
        public var name: InterfaceName
        public var kind: InterfaceKind
        public var verdict: Verdict
        /// Monotonic time it became online (meaningful when `verdict == .online`).
        public var onlineSinceMilliseconds: Int
        /// It came online after a known failure (not straight from start-up's
        /// `unknown`): only such an uplink is held down.
        public var recovered: Bool
        /// Validated recently enough to take over without another probe.
        public var fresh: Bool
        /// Its verification probe failed and no full round has confirmed it since.
        public var excluded: Bool

        public init(name: InterfaceName, kind: InterfaceKind, verdict: Verdict, onlineSinceMilliseconds: Int,
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

    public private(set) var primary: InterfaceName?
    /// When a preferred uplink's hold-down ends, so the caller can wake up then.
    public private(set) var holdDownEndsMilliseconds: Int?
    /// The uplink to verify before it may become primary, if any.
    public private(set) var toVerify: InterfaceName?

    public init() {}

    /// Re-evaluates; returns true when the primary changed.
    public mutating func select(from candidates: [Candidate], policy: AgentPolicy, now: Int) -> Bool {
        holdDownEndsMilliseconds = nil
        toVerify = nil
        let rank = { (candidate: Candidate) in policy.rank(of: candidate.name, kind: candidate.kind) }
        let online = candidates.filter { $0.verdict == .online && !$0.excluded }
            .sorted { (rank($0), $0.name) < (rank($1), $1.name) }
        let previous = primary
        guard let current = online.first(where: { $0.name == primary }) else {
            // The primary is gone or failed: the best online uplink takes over at once
            // if it is fresh; a stale one is verified first, and the old choice stands
            // until then (one primary change, not two).
            guard let best = online.first else {
                primary = nil
                return previous != nil
            }
            guard best.fresh else {
                toVerify = best.name
                return false
            }
            primary = best.name
            return previous != primary
        }
        // Walk the uplinks preferred over the current primary, best first; the first
        // whose hold-down has passed takes over (after verification, if stale).
        for candidate in online where candidate.name != current.name {
            guard rank(candidate) < rank(current) else { break }
            let heldUntil = candidate.onlineSinceMilliseconds + (candidate.recovered ? policy.holdDownMilliseconds : 0)
            if heldUntil <= now {
                guard candidate.fresh else {
                    toVerify = candidate.name
                    return false
                }
                primary = candidate.name
                return true
            }
            holdDownEndsMilliseconds = min(holdDownEndsMilliseconds ?? heldUntil, heldUntil)
        }
        return false
    }
}
