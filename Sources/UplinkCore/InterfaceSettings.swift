/// What `[interface NAME]` sets for one interface.
public struct InterfaceSettings: Sendable, Equatable {
    /// Overrides the detected kind.
    public var kind: InterfaceKind?
    /// Daily probe byte budget of this uplink.
    public var dailyBudgetBytes: Int?
    /// This uplink's DNS servers, instead of discovering them.
    public var dnsServers: [IPAddress]?

    public init(kind: InterfaceKind? = nil, dailyBudgetBytes: Int? = nil, dnsServers: [IPAddress]? = nil) {
        self.kind = kind
        self.dailyBudgetBytes = dailyBudgetBytes
        self.dnsServers = dnsServers
    }
}
