/// Where an uplink's DNS servers were found. The cases are listed in discovery order:
/// the first source that names servers for an interface wins.
package enum DNSSource: String, Sendable, CaseIterable {
    /// `[interface NAME] dns = ...` in the configuration.
    case configured
    /// systemd-networkd's per-link state, then systemd-resolved's per-link state.
    case networkd
    /// NetworkManager's DHCP lease files (internal client or dhclient).
    case networkmanager
    /// ISC dhclient lease files.
    case dhclient
    /// resolvconf's per-interface files (what udhcpc, dhclient and ifupdown feed it).
    case resolvconf
    /// The system-wide /etc/resolv.conf: not specific to the uplink.
    case resolvConf = "resolv.conf"

    /// Whether servers from this source belong to the uplink itself. Servers from
    /// resolv.conf are still queried through the uplink, but they may be another
    /// uplink's (or a local cache's), and status says so.
    package var isPerUplink: Bool { self != .resolvConf }
}

/// The DNS servers of one uplink and where they came from.
package struct DNSServers: Sendable, Equatable {
    package var source: DNSSource?
    package var addresses: [IPAddress]
    /// The file (or configuration key) they were read from, for diagnostics.
    package var origin: String?

    package init(source: DNSSource?, addresses: [IPAddress], origin: String? = nil) {
        self.source = source
        self.addresses = addresses
        self.origin = origin
    }

    package static let none = DNSServers(source: nil, addresses: [])

    package var isPerUplink: Bool { source?.isPerUplink ?? false }

    /// Whether queries are bound to the uplink. A resolv.conf that names only a local
    /// cache (127.0.0.53, 127.0.0.1) cannot be reached through an uplink: those
    /// queries stay on the host, and the cache answers the way the primary does,
    /// which status reports as not per-uplink.
    package var bindsToInterface: Bool { !addresses.allSatisfy(\.isLoopback) }

    /// The servers to ask: loopback ones are dropped when queries are bound, since a
    /// bound socket cannot reach them.
    package var reachable: [IPAddress] {
        bindsToInterface ? addresses.filter { !$0.isLoopback } : addresses
    }

    /// Servers in the order to ask for one record family: the same family first (it
    /// is the one known to work when the other is broken), then the rest.
    package func ordered(for family: AddressFamily) -> [IPAddress] {
        reachable.filter { $0.family == family } + reachable.filter { $0.family != family }
    }

    package var json: JSONValue {
        .object([
            ("source", .string(source?.rawValue ?? "none")),
            ("per_uplink", .bool(isPerUplink)),
            ("servers", .array(addresses.map { .string($0.description) })),
        ])
    }
}
