/// Which way a connection the agent makes for itself (MQTT) leaves the gateway. A
/// host on the internet is reached through the current primary whatever the main
/// routing table says, bound to it as probes are (SO_BINDTODEVICE): without the route
/// hook the main table keeps its default route through a dead uplink, and even with
/// it a connection made before the hook ran keeps that uplink's source address. A
/// host on a network the gateway is attached to (a broker on the LAN or on an
/// uplink's own network, loopback) is left to the kernel's routes, as is everything
/// while there is no primary.
package enum OwnTrafficRoute: Sendable, Equatable {
    case primary(InterfaceName)
    case system

    /// `links`: every interface the kernel has, with its addresses and prefixes.
    package static func of(_ address: IPAddress, links: [LinkFacts], primary: InterfaceName?) -> OwnTrafficRoute {
        guard let primary, !address.isLoopback else { return .system }
        let attached = links.contains { link in link.addresses.contains { $0.contains(address) } }
        return attached ? .system : .primary(primary)
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
