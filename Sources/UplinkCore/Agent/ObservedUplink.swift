/// One interface the agent should treat as an uplink, as the adapters saw it.
package struct ObservedUplink: Sendable, Equatable {
    package var facts: LinkFacts
    package var kind: InterfaceKind
    /// Its DHCP lease carries the vendor option that says "metered" (ANDROID_METERED).
    package var leaseSaysMetered: Bool

    package init(facts: LinkFacts, kind: InterfaceKind, leaseSaysMetered: Bool = false) {
        self.facts = facts
        self.kind = kind
        self.leaseSaysMetered = leaseSaysMetered
    }
}
