/// A decision of the agent core worth telling that no hook event carries. The core
/// says what happened; the runtime decides how to word and log it.
package enum AgentNote: Sendable, Equatable {
    /// Flap damping suppresses the uplink: it flapped often enough that its penalty
    /// reached the suppress limit, and it is not primary again for about
    /// `releaseSeconds` unless nothing else is online.
    case suppressed(InterfaceName, penalty: Int, suppressLimit: Int, releaseSeconds: Int)
    /// Its penalty decayed to the reuse limit: no longer suppressed.
    case released(InterfaceName, reuseLimit: Int)
    /// Passed over for primary because flap damping suppresses it.
    case passedOver(InterfaceName)
    /// Packets leave the primary with nothing coming back: a full round confirms.
    case stalled(InterfaceName, StallEvidence)

    /// The uplink the note is about.
    package var interface: InterfaceName {
        switch self {
        case .suppressed(let name, _, _, _), .released(let name, _), .passedOver(let name), .stalled(let name, _):
            return name
        }
    }
}
