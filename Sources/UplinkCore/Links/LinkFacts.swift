/// An address on an interface, as the kernel reports it.
package struct InterfaceAddress: Sendable, Hashable {
    package var address: IPAddress
    package var prefixLength: Int
    /// The kernel's scope: "global", "site", "link", "host", or a number.
    package var scope: String

    package init(address: IPAddress, prefixLength: Int, scope: String = "global") {
        self.address = address
        self.prefixLength = prefixLength
        self.scope = scope
    }

    package var family: AddressFamily { address.family }
    /// Usable toward the internet: not link-local, not loopback.
    package var isUsable: Bool { !address.isLinkLocal && !address.isLoopback }
}

/// A default route that leaves through an interface.
package struct DefaultRoute: Sendable, Hashable {
    package var family: AddressFamily
    package var gateway: IPAddress?
    package var metric: Int
    package var table: Int
    /// The routing protocol that installed it (RTPROT_*: 2 kernel, 3 boot, 4 static,
    /// 16 dhcp, ...; the route-failover hook's own are 77 by default).
    package var protocolNumber: Int

    package init(family: AddressFamily, gateway: IPAddress?, metric: Int, table: Int, protocolNumber: Int = 3) {
        self.family = family
        self.gateway = gateway
        self.metric = metric
        self.table = table
        self.protocolNumber = protocolNumber
    }
}

/// What the kernel says about one interface at one moment.
package struct LinkFacts: Sendable, Equatable {
    package var name: InterfaceName
    package var index: Int
    package var adminUp: Bool
    /// IFF_LOWER_UP: the driver reports carrier.
    package var carrier: Bool
    package var addresses: [InterfaceAddress]
    package var defaultRoutes: [DefaultRoute]
    /// RFC 2863 operational state as the kernel names it ("up", "down", "dormant", ...).
    package var operState: String
    package var isLoopback: Bool
    /// The rtnetlink link kind (IFLA_INFO_KIND: "veth", "bridge", "vlan", ...), nil for
    /// plain hardware interfaces.
    package var linkType: String?
    /// The bridge or bond this interface is enslaved to (IFLA_MASTER), if any.
    package var masterIndex: Int?

    /// The same interface without uplinkd's own default routes (its table, its
    /// protocol): they are not the uplink's.
    package func withoutRoutes(ownedBy settings: RoutingSettings) -> LinkFacts {
        var facts = self
        facts.defaultRoutes.removeAll { settings.owns($0) }
        return facts
    }

    package init(name: InterfaceName, index: Int, adminUp: Bool, carrier: Bool,
                addresses: [InterfaceAddress], defaultRoutes: [DefaultRoute],
                operState: String = "unknown", isLoopback: Bool = false, linkType: String? = nil,
                masterIndex: Int? = nil) {
        self.masterIndex = masterIndex
        self.name = name
        self.index = index
        self.adminUp = adminUp
        self.carrier = carrier
        self.addresses = addresses
        self.defaultRoutes = defaultRoutes
        self.operState = operState
        self.isLoopback = isLoopback
        self.linkType = linkType
    }
}
