/// Which interfaces are uplinks.
package enum UplinkSelection: Sendable, Equatable {
    /// Interfaces with a default route, or of kind wifi or wwan; never loopback, never
    /// a port of a bridge or bond (an access point's Wi-Fi inside br-lan serves the
    /// LAN, its traffic is the master's); virtual links (veth, bridge, tunnels, ...)
    /// only with a default route.
    case automatic
    /// Exactly these interfaces.
    case listed([InterfaceName])

    package func isUplink(_ facts: LinkFacts, kind: InterfaceKind) -> Bool {
        switch self {
        case .listed(let names):
            return names.contains(facts.name)
        case .automatic:
            if facts.isLoopback || facts.masterIndex != nil { return false }
            if !facts.defaultRoutes.isEmpty { return true }
            if facts.linkType != nil { return false }
            return kind == .wifi || kind == .wwan
        }
    }
}
