/// Hook events waiting for their turn (hooks run one at a time).
///
/// Verdict events are coalesced per uplink: a newer one replaces a queued one (latest
/// wins, keeping the older `previousVerdict`, so hooks hear "from what they last knew
/// to what is true now, and the older decision number, so no later decision looks done
/// before it ran), and a change that undoes itself disappears. Primary events are never
/// merged and keep their order.
package struct HookQueue: Sendable, Equatable {
    package private(set) var pending: [HookEvent] = []

    package init() {}

    package var isEmpty: Bool { pending.isEmpty }

    package mutating func enqueue(_ event: HookEvent) {
        guard event.kind == .verdict,
              let index = pending.firstIndex(where: { $0.kind == .verdict && $0.interface == event.interface }) else {
            pending.append(event)
            return
        }
        var merged = event
        merged.previousVerdict = pending[index].previousVerdict
        merged.decision = pending[index].decision
        if merged.previousVerdict == merged.verdict {
            pending.remove(at: index)
        } else {
            pending[index] = merged
        }
    }

    /// The highest decision up to which every decision's hooks have run, given the
    /// event whose hooks run now (if any) and the latest decision made: one below the
    /// oldest still waiting or running, else the latest (a decision merged away or
    /// dropped at a stop never runs, and is done with the one that replaced it).
    package func caughtUp(running: HookEvent?, latest: Int) -> Int {
        let waiting = pending.map(\.decision) + (running.map { [$0.decision] } ?? [])
        return waiting.min().map { $0 - 1 } ?? latest
    }

    package mutating func next() -> HookEvent? {
        pending.isEmpty ? nil : pending.removeFirst()
    }
}
