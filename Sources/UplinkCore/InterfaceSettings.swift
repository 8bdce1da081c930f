/// What `[interface NAME]` sets for one interface.
public struct InterfaceSettings: Sendable, Equatable {
    /// Overrides the detected kind.
    public var kind: InterfaceKind?
    /// This uplink's DNS servers, instead of discovering them.
    public var dnsServers: [IPAddress]?
    /// Its own probing settings, over those of its kind.
    public var probing: ProbingOverrides

    public init(kind: InterfaceKind? = nil, dnsServers: [IPAddress]? = nil, probing: ProbingOverrides = ProbingOverrides()) {
        self.kind = kind
        self.dnsServers = dnsServers
        self.probing = probing
    }
}
