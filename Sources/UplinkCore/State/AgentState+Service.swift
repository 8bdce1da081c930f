/// What the service manager hears about the agent: whether start-up is over (every
/// uplink has a first verdict) and a one-line summary for `systemctl status`.
extension AgentState {
    /// Every uplink has a verdict, so "ready" means the state file says something
    /// about each of them. No uplink at all is settled too: there is nothing to wait for.
    public var isSettled: Bool {
        uplinks.allSatisfy { $0.verdict != .unknown }
    }

    /// "primary eth0; eth0 online, wwan0 limited (dns)", short enough for one line of
    /// `systemctl status` with a few uplinks (the full picture is `uplinkd status`).
    public var summaryLine: String {
        let head = primary.map { "primary \($0)" } ?? "no primary"
        guard !uplinks.isEmpty else { return "\(head); no uplinks" }
        let each = uplinks.map { uplink -> String in
            var text = "\(uplink.interface) \(uplink.verdict.rawValue)"
            if uplink.verdict != .online && uplink.verdict != .unknown { text += " (\(uplink.reason.rawValue))" }
            if uplink.quality.degraded { text += " degraded" }
            return text
        }
        return "\(head); \(each.joined(separator: ", "))"
    }
}
