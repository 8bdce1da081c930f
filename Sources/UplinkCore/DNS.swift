/// Where an uplink's DNS servers were found. The cases are listed in discovery order:
/// the first source that names servers for an interface wins.
public enum DNSSource: String, Sendable, CaseIterable {
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
    public var isPerUplink: Bool { self != .resolvConf }
}

/// The DNS servers of one uplink and where they came from.
public struct DNSServers: Sendable, Equatable {
    public var source: DNSSource?
    public var addresses: [IPAddress]
    /// The file (or configuration key) they were read from, for diagnostics.
    public var origin: String?

    public init(source: DNSSource?, addresses: [IPAddress], origin: String? = nil) {
        self.source = source
        self.addresses = addresses
        self.origin = origin
    }

    public static let none = DNSServers(source: nil, addresses: [])

    public var isPerUplink: Bool { source?.isPerUplink ?? false }

    /// Whether queries are bound to the uplink. A resolv.conf that names only a local
    /// cache (127.0.0.53, 127.0.0.1) cannot be reached through an uplink: those
    /// queries stay on the host, and the cache answers the way the primary does,
    /// which status reports as not per-uplink.
    public var bindsToInterface: Bool { !addresses.allSatisfy(\.isLoopback) }

    /// The servers to ask: loopback ones are dropped when queries are bound, since a
    /// bound socket cannot reach them.
    public var reachable: [IPAddress] {
        bindsToInterface ? addresses.filter { !$0.isLoopback } : addresses
    }

    /// Servers in the order to ask for one record family: the same family first (it
    /// is the one known to work when the other is broken), then the rest.
    public func ordered(for family: AddressFamily) -> [IPAddress] {
        reachable.filter { $0.family == family } + reachable.filter { $0.family != family }
    }

    public var json: JSONValue {
        .object([
            ("source", .string(source?.rawValue ?? "none")),
            ("per_uplink", .bool(isPerUplink)),
            ("servers", .array(addresses.map { .string($0.description) })),
        ])
    }
}

/// A name and the addresses it must resolve to through every uplink: a resolver that
/// answers otherwise is lying (`[dns] known-answer`).
public struct KnownAnswer: Sendable, Equatable {
    public var name: String
    public var addresses: [IPAddress]

    public init(name: String, addresses: [IPAddress]) {
        self.name = name
        self.addresses = addresses
    }

    /// The families this check can be asked in: those of the expected addresses.
    public var families: Set<AddressFamily> { Set(addresses.map(\.family)) }
}

/// What the known-answer lookup found for one family of one uplink.
public enum KnownAnswerResult: Sendable, Equatable {
    case matched
    /// The resolver answered, with none of the expected addresses.
    case mismatch([IPAddress])
    /// No answer: says nothing about lying (the probes tell whether DNS works).
    case unanswered

    public static func judge(_ answers: [IPAddress], expected: KnownAnswer) -> KnownAnswerResult {
        answers.contains(where: expected.addresses.contains) ? .matched : .mismatch(answers)
    }
}

/// How probes resolve names (`[dns]` and `[interface NAME] dns`).
public struct DNSSettings: Sendable, Equatable {
    /// Sources that may be used; discovery still follows `DNSSource.allCases` order.
    public var sources: Set<DNSSource> = Set(DNSSource.allCases)
    public var configuredServers: [String: [IPAddress]] = [:]
    public var dhclientLeaseDirectories = ["/var/lib/dhcp", "/var/lib/dhclient"]
    public var resolvconfDirectory = "/run/resolvconf/interface"
    public var resolvConfPath = "/etc/resolv.conf"
    /// Not configuration keys: fixed by those programs, settable for tests.
    public var networkdDirectory = "/run/systemd/netif/links"
    public var resolvedDirectory = "/run/systemd/resolve/netif"
    public var networkManagerDirectories = ["/run/NetworkManager", "/var/lib/NetworkManager"]
    /// Time limit for resolving one name (all servers and retries).
    public var timeoutMilliseconds = 3_000
    public var knownAnswer: KnownAnswer?
    /// Whether a public probe name answered with a private address means a portal.
    public var hijackCheck = true

    public init() {}
}

/// DNS answers as evidence (the design's `captive` row): a probe host name that
/// resolves, through the uplink's own servers, only to addresses that can never be
/// the public internet was answered by something local, a portal.
public enum DNSEvidence {
    public enum Judgement: Sendable, Equatable {
        /// Send the probe to these addresses.
        case pin([IPAddress])
        /// Every answer was private, link-local, loopback, ULA or unspecified.
        case hijacked([IPAddress])
    }

    /// `family` is the record family asked for. IPv4-mapped answers to an AAAA query
    /// are never pinned: Linux would carry them over IPv4 and make IPv6 look alive.
    public static func judge(_ answers: [IPAddress], family: AddressFamily, hijackCheck: Bool) -> Judgement {
        let usable = answers.filter { family == .ipv4 || $0.mappedIPv4 == nil }
        guard hijackCheck else { return .pin(usable) }
        if !answers.isEmpty && answers.allSatisfy(\.isSpecialPurpose) { return .hijacked(answers) }
        // Mixed answers: keep the public ones, never probe a private address.
        return .pin(usable.filter { !$0.isSpecialPurpose })
    }
}
