/// What `uplinkd wait-online` waits for, and the one decision it makes each time the
/// state file changes: does this state satisfy the condition, and if not, what is
/// still missing (the sentence printed when the wait times out).
///
/// Only the facts of a running agent count: a state file left by an agent that
/// stopped or died says nothing about the network now.
package struct WaitCondition: Sendable, Equatable {
    /// Which uplinks must be online.
    package enum Target: Sendable, Equatable {
        /// The agent has a primary uplink (no names, no `--any`).
        case primary
        /// At least one uplink (`--any`).
        case anyUplink
        /// Every one of these (`IFACE...`).
        case uplinks([InterfaceName])
    }

    /// The answer for one state.
    package enum Outcome: Sendable, Equatable {
        case satisfied
        /// Not yet; the sentence says what is missing.
        case missing(String)
    }

    package var target: Target
    /// `captive` counts as well as `online` (`--captive-ok`).
    package var captiveAccepted: Bool

    package init(target: Target, captiveAccepted: Bool = false) {
        self.target = target
        self.captiveAccepted = captiveAccepted
    }

    /// Decides for `state`; `agentRunning` is whether the process that wrote it still
    /// runs (`AgentState.writtenByRunningAgent`).
    package func evaluate(_ state: AgentState, agentRunning: Bool) -> Outcome {
        if state.stopped {
            return .missing("the agent stopped (pid \(state.pid) wrote its final state)")
        }
        guard agentRunning else {
            return .missing("the agent that wrote the state file (pid \(state.pid)) is not running")
        }
        let outcome = targetOutcome(state)
        // Held until the hooks of what the file says have run: a service started after
        // wait-online must find the routes the file promises (a format 1 file, whose
        // counters are both 0, cannot tell, and is taken at its word).
        guard case .satisfied = outcome, state.hooksDone < state.decision else { return outcome }
        return .missing("the hooks of decision \(state.decision) have not run yet (done up to \(state.hooksDone))")
    }

    private func targetOutcome(_ state: AgentState) -> Outcome {
        switch target {
        case .primary:
            // A primary is always an online uplink; with captive accepted any captive
            // uplink will do, since the agent never makes a captive one primary.
            if state.primary != nil || state.uplinks.contains(where: { captiveAccepted && $0.verdict == .captive }) {
                return .satisfied
            }
            return .missing("no primary uplink: " + describeAll(state.uplinks))
        case .anyUplink:
            if state.uplinks.contains(where: accepts) { return .satisfied }
            let wanted = captiveAccepted ? "no uplink online or captive" : "no uplink online"
            return .missing(wanted + ": " + describeAll(state.uplinks))
        case .uplinks(let names):
            let byName = Dictionary(state.uplinks.map { ($0.interface, $0) }, uniquingKeysWith: { first, _ in first })
            let lacking = names.compactMap { name -> String? in
                guard let uplink = byName[name] else { return "\(name) is not among the agent's uplinks" }
                return accepts(uplink) ? nil : describe(uplink)
            }
            return lacking.isEmpty ? .satisfied : .missing(lacking.joined(separator: ", "))
        }
    }

    private func accepts(_ uplink: UplinkStatus) -> Bool {
        uplink.verdict == .online || (captiveAccepted && uplink.verdict == .captive)
    }

    private func describeAll(_ uplinks: [UplinkStatus]) -> String {
        uplinks.isEmpty ? "the agent has no uplinks" : uplinks.map(describe).joined(separator: ", ")
    }

    private func describe(_ uplink: UplinkStatus) -> String {
        switch uplink.verdict {
        case .unknown: return "\(uplink.interface) has no verdict yet"
        // Online without being primary: the selector has not taken it yet (a
        // verification probe, or flap damping while another uplink is online).
        case .online: return "\(uplink.interface) is online but not primary yet"
        default: return "\(uplink.interface) is \(uplink.verdict.rawValue) (\(uplink.reason.rawValue))"
        }
    }
}

extension AgentState {
    /// Whether the agent that wrote this state still runs: it has not written its
    /// final `stopped` state and its process exists (`processExists` asks the system;
    /// `uplinkd status` and `wait-online` share this rule).
    package func writtenByRunningAgent(processExists: (Int) -> Bool) -> Bool {
        !stopped && pid > 0 && processExists(pid)
    }
}
