/// Decides, from link facts alone, whether an uplink is `down` and which families are
/// worth probing.
package enum LinkEvaluator {
    package enum Result: Equatable, Sendable {
        /// No probe can succeed: the uplink is down for this reason.
        case down(reason: Reason)
        /// Probe these families (each has a usable address and a default route).
        case probe([AddressFamily])

        /// The link-level verdict: `down` with its reason, or `unknown` (needs a probe).
        package var assessment: Assessment {
            switch self {
            case .down(let reason): return Assessment(.down, reason: reason)
            case .probe: return Assessment(.unknown, reason: .needsProbe)
            }
        }
    }

    package static func evaluate(_ facts: LinkFacts?) -> Result {
        guard let facts else { return .down(reason: .noSuchInterface) }
        if !facts.adminUp { return .down(reason: .adminDown) }
        if !facts.carrier { return .down(reason: .noCarrier) }
        if facts.addresses.isEmpty { return .down(reason: .noAddress) }
        let usableFamilies = AddressFamily.allCases.filter { family in
            facts.addresses.contains { $0.family == family && $0.isUsable }
        }
        if usableFamilies.isEmpty { return .down(reason: .linkLocalOnly) }
        let routed = usableFamilies.filter { family in facts.defaultRoutes.contains { $0.family == family } }
        if routed.isEmpty { return .down(reason: .noRoute) }
        return .probe(routed)
    }
}
