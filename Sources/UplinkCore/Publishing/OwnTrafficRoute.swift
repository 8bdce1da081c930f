/// Which way a connection the agent makes for itself (MQTT) leaves the gateway. A
/// host on the internet is reached through the current primary whatever the main
/// routing table says, bound to it as probes are (SO_BINDTODEVICE): without the route
/// hook the main table keeps its default route through a dead uplink, and even with
/// it a connection made before the hook ran keeps that uplink's source address. A
/// host on a network the gateway is attached to (a broker on the LAN or on an
/// uplink's own network, loopback) is left to the kernel's routes. An internet host
/// reached while there is no primary yet (the agent's first connect, before any round
/// finished) is left to the kernel's routes too, but only until a primary is chosen:
/// such a connection is bound to no uplink, and nothing would ever move it off a
/// failed one.
package enum OwnTrafficRoute: Sendable, Equatable {
    case primary(InterfaceName)
    case system
    /// An internet host while no primary exists: the kernel's routes for now, and a
    /// new connection once a primary is chosen.
    case unrouted

    /// `links`: every interface the kernel has, with its addresses and prefixes.
    package static func of(_ address: IPAddress, links: [LinkFacts], primary: InterfaceName?) -> OwnTrafficRoute {
        guard !address.isLoopback else { return .system }
        let attached = links.contains { link in link.addresses.contains { $0.contains(address) } }
        if attached { return .system }
        return primary.map(OwnTrafficRoute.primary) ?? .unrouted
    }
}

extension InterfaceAddress {
    /// Whether `other` is on this address's network (its prefix).
    package func contains(_ other: IPAddress) -> Bool {
        guard other.family == address.family else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(address.bytes, other.bytes) {
            guard remaining > 0 else { return true }
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if mine & mask != theirs & mask { return false }
            remaining -= bits
        }
        return true
    }
}
