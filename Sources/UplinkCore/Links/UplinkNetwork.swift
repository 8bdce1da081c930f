/// An uplink's network as hooks see it, per family: its addresses, its gateway and its
/// DNS servers, so a hook can act on one family (routes, NAT, a resolver) without
/// asking the kernel again.
package struct UplinkNetwork: Sendable, Equatable {
    /// Usable addresses (not link-local), with their prefix lengths.
    package var addresses: [InterfaceAddress] = []
    /// The gateway of its preferred default route in each family (lowest metric).
    package var gateways: [AddressFamily: IPAddress] = [:]
    /// The DNS servers its last round used.
    package var dnsServers: [IPAddress] = []

    package init(addresses: [InterfaceAddress] = [], gateways: [AddressFamily: IPAddress] = [:],
                dnsServers: [IPAddress] = []) {
        self.addresses = addresses
        self.gateways = gateways
        self.dnsServers = dnsServers
    }

    /// The addresses and gateways the kernel reports now (DNS servers are learned by
    /// rounds and kept by the caller).
    package init(facts: LinkFacts, dnsServers: [IPAddress]) {
        addresses = facts.addresses.filter(\.isUsable)
        for family in AddressFamily.allCases {
            let routes = facts.defaultRoutes.filter { $0.family == family && $0.gateway != nil }
            gateways[family] = routes.min(by: { $0.metric < $1.metric })?.gateway
        }
        self.dnsServers = dnsServers
    }

    /// `UPLINK_IPV4_ADDRESSES`, `UPLINK_IPV4_GATEWAY`, `UPLINK_IPV4_DNS` and the same
    /// for IPv6 (space-separated, empty when there is none), and `UPLINK_DNS_SERVERS`
    /// with both families.
    package var environment: [String] {
        var lines: [String] = []
        for family in AddressFamily.allCases {
            let prefix = family == .ipv4 ? "UPLINK_IPV4" : "UPLINK_IPV6"
            let own = addresses.filter { $0.family == family }.map { "\($0.address)/\($0.prefixLength)" }
            lines.append("\(prefix)_ADDRESSES=\(own.joined(separator: " "))")
            lines.append("\(prefix)_GATEWAY=\(gateways[family].map { "\($0)" } ?? "")")
            lines.append("\(prefix)_DNS=\(dnsServers.filter { $0.family == family }.map { "\($0)" }.joined(separator: " "))")
        }
        lines.append("UPLINK_DNS_SERVERS=\(dnsServers.map { "\($0)" }.joined(separator: " "))")
        return lines
    }
}
