/// One interface the agent should treat as an uplink, as the adapters saw it.
public struct ObservedUplink: Sendable, Equatable {
    public var facts: LinkFacts
    public var kind: InterfaceKind
    /// Its DHCP lease carries the vendor option that says "metered" (ANDROID_METERED).
    public var leaseSaysMetered: Bool

    public init(facts: LinkFacts, kind: InterfaceKind, leaseSaysMetered: Bool = false) {
        self.facts = facts
        self.kind = kind
        self.leaseSaysMetered = leaseSaysMetered
    }
}
