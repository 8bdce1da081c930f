/// Picks the primary uplink: the best `online` uplink by priority, with a hold-down so
/// an uplink that just recovered must stay online for a while before it takes the
/// primary role back from another online uplink. At start-up nothing has recovered:
/// whichever uplink answers first must not keep a better one waiting. No online
/// uplink, no primary.
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

        public init(name: InterfaceName, kind: InterfaceKind, verdict: Verdict, onlineSinceMilliseconds: Int, recovered: Bool = true) {
            self.name = name
            self.kind = kind
            self.verdict = verdict
            self.onlineSinceMilliseconds = onlineSinceMilliseconds
            self.recovered = recovered
        }
    }

    public private(set) var primary: InterfaceName?
    /// When a preferred uplink's hold-down ends, so the caller can wake up then.
    public private(set) var holdDownEndsMilliseconds: Int?

    public init() {}

    /// Re-evaluates; returns true when the primary changed.
    public mutating func select(from candidates: [Candidate], policy: AgentPolicy, now: Int) -> Bool {
        holdDownEndsMilliseconds = nil
        let online = candidates.filter { $0.verdict == .online }
            .sorted { (policy.rank(of: $0.name, kind: $0.kind), $0.name) < (policy.rank(of: $1.name, kind: $1.kind), $1.name) }
        let previous = primary
        guard let best = online.first else {
            primary = nil
            return previous != nil
        }
        guard let current = online.first(where: { $0.name == primary }) else {
            // The primary is gone or not online: nothing to protect, take the best now.
            primary = best.name
            return previous != primary
        }
        // Walk the uplinks preferred over the current primary, best first; the first
        // whose hold-down has passed takes over.
        for candidate in online where candidate.name != current.name {
            guard policy.rank(of: candidate.name, kind: candidate.kind) < policy.rank(of: current.name, kind: current.kind) else { break }
            let heldUntil = candidate.onlineSinceMilliseconds + (candidate.recovered ? policy.holdDownMilliseconds : 0)
            if heldUntil <= now {
                primary = candidate.name
                return true
            }
            holdDownEndsMilliseconds = min(holdDownEndsMilliseconds ?? heldUntil, heldUntil)
        }
        return false
    }
}
