/// The validated configuration of uplinkd. Built-in defaults apply to everything not
/// set; `config/uplinkd.conf` shows every key with its default.
public struct Configuration: Sendable, Equatable {
    /// Most bytes of a probe's body that are read; the transfer is cut after that.
    package var bodyLimitBytes = 4_096
    /// Refuse plain-HTTP probes and let libcurl speak only HTTPS.
    package var httpsOnly = false
    /// Certificates that HTTPS probes and the captive-portal API are checked against
    /// (PEM); nil: the system's bundle.
    package var caFilePath: String?
    /// Ask the captive-portal API (RFC 8908) that DHCP or RA announced (RFC 8910).
    package var useCaptivePortalAPI = true
    /// Whether the built-in probe set is used besides the `[probe ...]` sections.
    package var useDefaultProbes = true
    /// Time limit for an external validator command.
    package var validatorTimeoutMilliseconds = 2_000
    /// Probes from `[probe NAME]` sections, in file order.
    package var customProbes: [ProbeSpec] = []
    /// Probing settings for every uplink (`[agent]` and `[check]` keys).
    package var probing = ProbingOverrides()
    /// Probing settings for every uplink of a kind (`[kind KIND]`).
    package var kinds: [InterfaceKind: ProbingOverrides] = [:]
    /// What `[interface NAME]` sections set, by interface.
    package var interfaces: [InterfaceName: InterfaceSettings] = [:]
    /// Set on the command line (`check --timeout`): over every other layer.
    package var commandLine = ProbingOverrides()
    /// Which interfaces are uplinks (`[uplinks] interfaces`).
    package var uplinkSelection: UplinkSelection = .automatic
    /// Receive buffer of the netlink socket; sized for bursts of link changes.
    package var netlinkReceiveBufferBytes = 1 << 20
    /// The agent's scheduling, hysteresis, primary selection, paths (`[agent]`).
    package var agent = AgentPolicy()
    /// How probe host names are resolved (`[dns]`).
    package var dns = DNSSettings()
    /// What the agent exports for other tools (`[export]`).
    package var export = ExportSettings()
    /// The MQTT push channel (`[mqtt]`); off unless a broker is set.
    package var mqtt = MQTTSettings()
    /// Which uplink carries which connection (`[flows]`, `[class NAME]`).
    package var flows = FlowSettings()

    public init() {}

    /// The probe set of a round: built-ins (unless disabled) followed by custom probes.
    package var probes: [ProbeSpec] {
        (useDefaultProbes ? DefaultProbes.all : []) + customProbes
    }

    /// The kind set for an interface in the configuration, which beats detection.
    package func configuredKind(of name: InterfaceName) -> InterfaceKind? {
        interfaces[name]?.kind
    }

    /// Whether an uplink is metered: `metered` from its most specific layer, where
    /// `auto` (the default) means cellular, or a DHCP lease that says so.
    package func isMetered(_ name: InterfaceName, kind: InterfaceKind, leaseSaysMetered: Bool = false) -> Bool {
        let setting = interfaces[name]?.probing.metered ?? kinds[kind]?.metered ?? probing.metered ?? .auto
        switch setting {
        case .yes: return true
        case .no: return false
        case .auto: return kind == .wwan || leaseSaysMetered
        }
    }

    /// The probing settings of one uplink: its class's defaults, then `[agent]` and
    /// `[check]`, `wwan-daily-budget` for cellular, `[kind KIND]`, `[interface NAME]`,
    /// and the command line, each over the one before.
    package func probingSettings(for name: InterfaceName, kind: InterfaceKind, metered: Bool) -> ProbingSettings {
        var settings = probing.applied(to: classDefaults(for: name, kind: kind, metered: metered))
        if kind == .wwan, let budget = agent.wwanDailyBudgetBytes { settings.dailyBudgetBytes = budget }
        if let layer = kinds[kind] { settings = layer.applied(to: settings) }
        if let layer = interfaces[name]?.probing { settings = layer.applied(to: settings) }
        return commandLine.applied(to: settings)
    }

    public static let defaultPath = "/etc/uplinkd/uplinkd.conf"
}
