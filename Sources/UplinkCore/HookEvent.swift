/// Something hooks are told about: a verdict change of one uplink, or a change of the
/// primary uplink.
public struct HookEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case verdict
        case primary
    }

    public var kind: Kind
    public var interface: String
    public var interfaceKind: InterfaceKind
    public var verdict: Verdict
    public var previousVerdict: Verdict
    public var reason: String
    public var portalURL: String?
    public var primary: String?
    public var previousPrimary: String?
    public var wallSeconds: Int

    public init(kind: Kind, interface: String, interfaceKind: InterfaceKind, verdict: Verdict, previousVerdict: Verdict,
                reason: String, portalURL: String?, primary: String?, previousPrimary: String?, wallSeconds: Int) {
        self.kind = kind
        self.interface = interface
        self.interfaceKind = interfaceKind
        self.verdict = verdict
        self.previousVerdict = previousVerdict
        self.reason = reason
        self.portalURL = portalURL
        self.primary = primary
        self.previousPrimary = previousPrimary
        self.wallSeconds = wallSeconds
    }

    /// The hook's environment (besides PATH). For a primary event the interface fields
    /// describe the new primary, or the previous one when there is none.
    public var environment: [String] {
        [
            "UPLINK_EVENT=\(kind.rawValue)",
            "UPLINK_INTERFACE=\(interface)",
            "UPLINK_KIND=\(interfaceKind.rawValue)",
            "UPLINK_VERDICT=\(verdict.rawValue)",
            "UPLINK_PREVIOUS=\(previousVerdict.rawValue)",
            "UPLINK_REASON=\(reason)",
            "UPLINK_PORTAL_URL=\(portalURL ?? "")",
            "UPLINK_PRIMARY=\(primary ?? "")",
            "UPLINK_PREVIOUS_PRIMARY=\(previousPrimary ?? "")",
            "UPLINK_TIME=\(wallSeconds)",
        ]
    }
}

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
