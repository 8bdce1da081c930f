/// A setting a running agent cannot take on a reload: the running value stays until
/// the restart (the agent removes at its stop what it made with the old values).
package enum RestartOnlySetting: Sendable, Equatable {
    /// `state-file`, still written at this path.
    case stateFile(kept: String)
    /// `route-table`, `rule-priority` and `route-protocol`, still these.
    case routingEntries(kept: RoutingSettings)
    /// `journal-file`, `journal-records`, `journal-heartbeat`, still these.
    case journal(kept: JournalSettings)
}

extension Configuration {
    /// Keeps `running`'s values of what changes only at a restart, and says which of
    /// them this configuration wanted to change.
    package mutating func keepRestartOnlySettings(of running: Configuration) -> [RestartOnlySetting] {
        var kept: [RestartOnlySetting] = []
        if agent.stateFilePath != running.agent.stateFilePath {
            agent.stateFilePath = running.agent.stateFilePath
            kept.append(.stateFile(kept: running.agent.stateFilePath))
        }
        let routing = running.agent.routing
        if !agent.routing.sameEntries(as: routing) {
            agent.routing.table = routing.table
            agent.routing.rulePriority = routing.rulePriority
            agent.routing.protocolNumber = routing.protocolNumber
            kept.append(.routingEntries(kept: routing))
        }
        if agent.journal != running.agent.journal {
            agent.journal = running.agent.journal
            kept.append(.journal(kept: running.agent.journal))
        }
        return kept
    }
}
