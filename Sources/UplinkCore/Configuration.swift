/// The validated configuration of uplinkd. Built-in defaults apply to everything not
/// set; `config/uplinkd.conf` shows every key with its default.
public struct Configuration: Sendable, Equatable {
    /// Time limit for one probe, connection included.
    public var probeTimeoutMilliseconds = 5_000
    /// Share of a round's probes that must validate for `online`.
    public var successThresholdPercent = 50
    /// Most bytes of a probe's body that are read; the transfer is cut after that.
    public var bodyLimitBytes = 4_096
    /// Refuse plain-HTTP probes and let libcurl speak only HTTPS.
    public var httpsOnly = false
    /// Whether the built-in probe set is used besides the `[probe ...]` sections.
    public var useDefaultProbes = true
    /// Time limit for an external validator command.
    public var validatorTimeoutMilliseconds = 2_000
    /// Probes from `[probe NAME]` sections, in file order.
    public var customProbes: [ProbeSpec] = []
    /// What `[interface NAME]` sections set, by interface.
    public var interfaces: [InterfaceName: InterfaceSettings] = [:]
    /// Which interfaces are uplinks (`[uplinks] interfaces`).
    public var uplinkSelection: UplinkSelection = .automatic
    /// Receive buffer of the netlink socket; sized for bursts of link changes.
    public var netlinkReceiveBufferBytes = 1 << 20
    /// The agent's scheduling, hysteresis, primary selection, paths (`[agent]`).
    public var agent = AgentPolicy()
    /// How probe host names are resolved (`[dns]`).
    public var dns = DNSSettings()

    public init() {}

    /// The probe set of a round: built-ins (unless disabled) followed by custom probes.
    public var probes: [ProbeSpec] {
        (useDefaultProbes ? DefaultProbes.all : []) + customProbes
    }

    /// The kind set for an interface in the configuration, which beats detection.
    public func configuredKind(of name: InterfaceName) -> InterfaceKind? {
        interfaces[name]?.kind
    }

    /// The daily probe byte budget of an uplink: its own, else the wwan default.
    public func dailyBudgetBytes(of name: InterfaceName, kind: InterfaceKind) -> Int? {
        interfaces[name]?.dailyBudgetBytes ?? (kind == .wwan ? agent.wwanDailyBudgetBytes : nil)
    }

    public static let defaultPath = "/etc/uplinkd/uplinkd.conf"
}
