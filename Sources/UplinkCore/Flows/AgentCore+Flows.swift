/// The flow plan from the agent's verdicts and primary choice.
extension AgentCore {
    /// A new uplink's mark slot: the lowest free one. Beyond 31 uplinks the rest get
    /// none and are never pinned (their connections follow the routing tables).
    mutating func assignFlowSlot(_ name: InterfaceName) {
        guard flowSlots[name] == nil else { return }
        let taken = Set(flowSlots.values)
        flowSlots[name] = FlowSettings.slots.first { !taken.contains($0) }
    }

    /// The runtime counted the connections pinned to each uplink (by slot).
    package mutating func flowsCounted(bySlot counts: [Int: Int]) {
        pinnedCounts = Dictionary(uniqueKeysWithValues: flowSlots.map { ($0.key, counts[$0.value] ?? 0) })
    }

    /// The plan now; nil unless `[flows] pinning` is on.
    package func flowPlan(now: Instant) -> FlowPlan? {
        let settings = configuration.flows
        guard settings.pinning else { return nil }
        let heldDown = Set(selector.heldDown)
        let candidates = uplinks.values.compactMap { uplink -> FlowCandidate? in
            guard let slot = flowSlots[uplink.name] else { return nil }
            let candidate = candidate(for: uplink, now: now)
            let usable = candidate.verdict == .online && !candidate.suppressed && !candidate.cappedOut
            return FlowCandidate(name: uplink.name, slot: slot, interfaceIndex: uplink.index, usable: usable,
                                 takesNewFlows: usable && !heldDown.contains(uplink.name) && !candidate.degraded
                                     && !candidate.lastResort && !candidate.excluded,
                                 metered: uplink.metered)
        }
        let primary = selector.primary
        let inDoubt = primary.flatMap { uplinks[$0]?.doubt?.suspectsUplink } ?? false
        return FlowPlan(settings: settings, interfaces: configuration.interfaces, candidates: candidates,
                        primary: primary, inDoubt: inDoubt, successor: inDoubt ? successor(now: now) : nil)
    }

    /// The uplink that would be primary if the primary failed now, or the one that
    /// would be verified first to take over (it is being verified beside the doubt).
    private func successor(now: Instant) -> InterfaceName? {
        guard let primary = selector.primary else { return nil }
        var trial = selector
        let candidates = uplinks.values.map { uplink in
            var candidate = candidate(for: uplink, now: now)
            if uplink.name == primary { candidate.verdict = .limited }
            return candidate
        }
        _ = trial.select(from: candidates, policy: policy, now: now.monotonicMilliseconds)
        return trial.primary == primary ? trial.toVerify : trial.primary
    }
}
