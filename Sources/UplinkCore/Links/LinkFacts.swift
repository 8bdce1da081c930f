/// An address on an interface, as the kernel reports it.
public struct InterfaceAddress: Sendable, Hashable {
    public var address: IPAddress
    public var prefixLength: Int
    /// The kernel's scope: "global", "site", "link", "host", or a number.
    public var scope: String

    public init(address: IPAddress, prefixLength: Int, scope: String = "global") {
        self.address = address
        self.prefixLength = prefixLength
        self.scope = scope
    }

    public var family: AddressFamily { address.family }
    /// Usable toward the internet: not link-local, not loopback.
    public var isUsable: Bool { !address.isLinkLocal && !address.isLoopback }
}

/// A default route that leaves through an interface.
public struct DefaultRoute: Sendable, Hashable {
    public var family: AddressFamily
    public var gateway: IPAddress?
    public var metric: Int
    public var table: Int
    /// The routing protocol that installed it (RTPROT_*: 2 kernel, 3 boot, 4 static,
    /// 16 dhcp, ...; the route-failover hook's own are 77 by default).
    public var protocolNumber: Int

    public init(family: AddressFamily, gateway: IPAddress?, metric: Int, table: Int, protocolNumber: Int = 3) {
        self.family = family
        self.gateway = gateway
        self.metric = metric
        self.table = table
        self.protocolNumber = protocolNumber
    }
}

/// What the kernel says about one interface at one moment.
public struct LinkFacts: Sendable, Equatable {
    public var name: InterfaceName
    public var index: Int
    public var adminUp: Bool
    /// IFF_LOWER_UP: the driver reports carrier.
    public var carrier: Bool
    public var addresses: [InterfaceAddress]
    public var defaultRoutes: [DefaultRoute]
    /// RFC 2863 operational state as the kernel names it ("up", "down", "dormant", ...).
    public var operState: String
    public var isLoopback: Bool
    /// The rtnetlink link kind (IFLA_INFO_KIND: "veth", "bridge", "vlan", ...), nil for
    /// plain hardware interfaces.
    public var linkType: String?
    /// The bridge or bond this interface is enslaved to (IFLA_MASTER), if any.
    public var masterIndex: Int?

    /// The same interface without uplinkd's own default routes (its table, its
    /// protocol): they are not the uplink's.
    public func withoutRoutes(ownedBy settings: RoutingSettings) -> LinkFacts {
        var facts = self
        facts.defaultRoutes.removeAll { settings.owns($0) }
        return facts
    }

    public init(name: InterfaceName, index: Int, adminUp: Bool, carrier: Bool,
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
