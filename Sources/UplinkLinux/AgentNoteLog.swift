import UplinkCore

/// How the agent words the core's notes in its log.
extension Log {
    static func note(_ note: AgentNote) {
        switch note {
        case .suppressed(let name, let penalty, let limit, let releaseSeconds):
            notice("\(name): flapping (penalty \(penalty), suppress limit \(limit)): suppressed by flap damping, "
                   + "not primary again for about \(releaseSeconds) s unless nothing else is online")
        case .released(let name, let reuseLimit):
            notice("\(name): flap damping penalty down to \(reuseLimit): no longer suppressed")
        case .passedOver(let name):
            notice("\(name): passed over for primary: suppressed by flap damping")
        case .stalled(let name, let evidence):
            info("\(name): packets leave with nothing coming back (\(evidence.unansweredPackets) unanswered, "
                 + "nothing back for \(evidence.silentMilliseconds) ms): a full round")
        }
    }
}
