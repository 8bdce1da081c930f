/// Hook events waiting for their turn (hooks run one at a time).
///
/// Verdict events are coalesced per uplink: a newer one replaces a queued one (latest
/// wins, keeping the older `previousVerdict`, so hooks hear "from what they last knew
/// to what is true now"), and a change that undoes itself disappears. Primary events
/// are never merged and keep their order.
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
        if merged.previousVerdict == merged.verdict {
            pending.remove(at: index)
        } else {
            pending[index] = merged
        }
    }

    package mutating func next() -> HookEvent? {
        pending.isEmpty ? nil : pending.removeFirst()
    }
}
