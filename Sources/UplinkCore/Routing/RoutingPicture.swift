/// One policy-routing rule as the kernel lists it (what uplinkd needs of it).
package struct RoutingRule: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var family: AddressFamily
    package var priority: Int
    package var table: Int
    /// FRA_PROTOCOL: who added the rule (0 when nobody said).
    package var protocolNumber: Int
    /// Routes of this prefix length or shorter found by the lookup are ignored (0:
    /// default routes); nil when the rule has none.
    package var suppressPrefixLength: Int?
    /// The packet mark the rule matches (`fwmark MARK/MASK`); nil when it matches any.
    package var fwmark: UInt32?
    package var fwmask: UInt32?

    package init(family: AddressFamily, priority: Int, table: Int, protocolNumber: Int, suppressPrefixLength: Int? = nil,
                fwmark: UInt32? = nil, fwmask: UInt32? = nil) {
        self.family = family
        self.priority = priority
        self.table = table
        self.protocolNumber = protocolNumber
        self.suppressPrefixLength = suppressPrefixLength
        self.fwmark = fwmark
        self.fwmask = fwmark == nil ? nil : fwmask
    }

    /// As `ip rule` prints it, with the family in front (logs, `uplinkd routes`).
    package var description: String {
        "\(family.ipFlag) rule \(priority): from all"
            + (fwmark.map { " fwmark 0x\(String($0, radix: 16))" + (fwmask.map { "/0x\(String($0, radix: 16))" } ?? "") } ?? "")
            + " lookup \(RoutingRule.tableName(table))"
            + (suppressPrefixLength.map { " suppress_prefixlength \($0)" } ?? "") + " proto \(protocolNumber)"
    }

    /// The kernel's tables by the names `ip` gives them, others by number.
    package static func tableName(_ table: Int) -> String {
        switch table {
        case 253: return "default"
        case 254: return "main"
        case 255: return "local"
        default: return String(table)
        }
    }

    package static func < (lhs: RoutingRule, rhs: RoutingRule) -> Bool {
        (lhs.family.rawValue, lhs.priority, lhs.table, lhs.protocolNumber, lhs.suppressPrefixLength ?? -1, lhs.fwmark ?? 0)
            < (rhs.family.rawValue, rhs.priority, rhs.table, rhs.protocolNumber, rhs.suppressPrefixLength ?? -1, rhs.fwmark ?? 0)
    }
}

/// A route of any destination, in any table, as the kernel lists it: what uplinkd
/// needs of the routes it owns.
package struct OwnedRoute: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var family: AddressFamily
    /// "default", or ADDRESS/PREFIX.
    package var destination: String
    package var gateway: IPAddress?
    package var interfaceIndex: Int
    /// The interface's name when the kernel still had it (for people to read).
    package var interfaceName: String?
    package var table: Int
    package var metric: Int
    package var protocolNumber: Int

    package init(family: AddressFamily, destination: String, gateway: IPAddress?, interfaceIndex: Int,
                interfaceName: String? = nil, table: Int, metric: Int, protocolNumber: Int) {
        self.interfaceName = interfaceName
        self.family = family
        self.destination = destination
        self.gateway = gateway
        self.interfaceIndex = interfaceIndex
        self.table = table
        self.metric = metric
        self.protocolNumber = protocolNumber
    }

    /// As `ip route` prints it, with the family in front (logs, `uplinkd routes`).
    package var description: String {
        var text = "\(family.ipFlag) route \(destination)"
        if let gateway { text += " via \(gateway)" }
        if let interfaceName {
            text += " dev \(interfaceName)"
        } else if interfaceIndex > 0 {
            text += " ifindex \(interfaceIndex)"
        }
        text += " table \(RoutingRule.tableName(table)) proto \(protocolNumber)"
        return metric == 0 ? text : text + " metric \(metric)"
    }

    package static func < (lhs: OwnedRoute, rhs: OwnedRoute) -> Bool { lhs.description < rhs.description }
}

/// What uplinkd's routing depends on, as the kernel has it at one moment: its own
/// rules and routes, and the default routes of each family's primary that its table
/// copies. When this changes while no hook runs, someone else changed it and the
/// route-failover hook has to bring it back (`RouteGuard`).
package struct RoutingPicture: Sendable, Equatable {
    package var rules: [RoutingRule]
    package var routes: [OwnedRoute]
    /// Each family primary's own default routes (the gateway the table must copy).
    package var primaryRoutes: [String]

    package init(rules: [RoutingRule] = [], routes: [OwnedRoute] = [], primaryRoutes: [String] = []) {
        self.rules = rules.sorted()
        self.routes = routes.sorted()
        self.primaryRoutes = primaryRoutes.sorted()
    }

    /// The picture of `settings`' entries among every rule and route listed, and of
    /// the family primaries' own default routes in `links`.
    package init(settings: RoutingSettings, rules: [RoutingRule], routes: [OwnedRoute],
                primaries: [AddressFamily: InterfaceName], links: [LinkFacts]) {
        var primaryRoutes: [String] = []
        for (family, name) in primaries {
            guard let facts = links.first(where: { $0.name == name }) else { continue }
            for route in facts.defaultRoutes where route.family == family && !settings.owns(route) {
                primaryRoutes.append("\(family.ipFlag) default via \(route.gateway.map { "\($0)" } ?? "-") dev \(name) "
                                     + "table \(route.table) metric \(route.metric)")
            }
        }
        self.init(rules: rules.filter(settings.owns), routes: routes.filter(settings.owns), primaryRoutes: primaryRoutes)
    }

    /// No rule and no route of uplinkd's.
    package var hasNoEntries: Bool { rules.isEmpty && routes.isEmpty }
}

extension AddressFamily {
    /// iproute2's family switch.
    package var ipFlag: String { self == .ipv4 ? "-4" : "-6" }
}

extension RoutingPicture {
    /// Every entry, for a log line.
    package var entryList: String {
        (rules.map(\.description) + routes.map(\.description)).joined(separator: "; ")
    }

    /// What differs from `earlier`, for a log line: "gone: ...; new: ...".
    package func changes(since earlier: RoutingPicture) -> String {
        func lines(_ picture: RoutingPicture) -> [String] {
            picture.rules.map(\.description) + picture.routes.map(\.description) + picture.primaryRoutes
        }
        let now = lines(self), then = lines(earlier)
        let gone = then.filter { !now.contains($0) }, new = now.filter { !then.contains($0) }
        var parts: [String] = []
        if !gone.isEmpty { parts.append("gone: " + gone.joined(separator: ", ")) }
        if !new.isEmpty { parts.append("new: " + new.joined(separator: ", ")) }
        // Only the count of a duplicated entry changed.
        return parts.isEmpty ? "entries duplicated or reordered" : parts.joined(separator: "; ")
    }
}
