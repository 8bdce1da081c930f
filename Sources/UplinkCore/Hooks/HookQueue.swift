/// Hook events waiting for their turn (hooks run one at a time).
///
/// Verdict events are coalesced per uplink: a newer one replaces a queued one (latest
/// wins, keeping the older `previousVerdict`, so hooks hear "from what they last knew
/// to what is true now"), and a change that undoes itself disappears. Primary events
/// are never merged and keep their order.
public struct HookQueue: Sendable, Equatable {
    public private(set) var pending: [HookEvent] = []

    public init() {}

    public var isEmpty: Bool { pending.isEmpty }

    public mutating func enqueue(_ event: HookEvent) {
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

    public mutating func next() -> HookEvent? {
        pending.isEmpty ? nil : pending.removeFirst()
    }
}
