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
    /// Kinds set in `[interface NAME]` sections; they override detection.
    public var interfaceKinds: [String: InterfaceKind] = [:]
    /// Which interfaces are uplinks (`[uplinks] interfaces`).
    public var uplinkSelection: UplinkSelection = .automatic
    /// Receive buffer of the netlink socket; sized for bursts of link changes.
    public var netlinkReceiveBufferBytes = 1 << 20
    /// The agent's scheduling, hysteresis, primary selection, paths (`[agent]`).
    public var agent = AgentPolicy()
    /// Daily probe byte budgets set in `[interface NAME]` sections.
    public var interfaceBudgets: [String: Int] = [:]
    /// How probe host names are resolved: `[dns]`, and `dns` in `[interface NAME]`.
    public var dns = DNSSettings()

    /// Per-interface settings for the agent core.
    public var interfaceSettings: [String: InterfaceSettings] {
        var settings: [String: InterfaceSettings] = [:]
        for (name, kind) in interfaceKinds { settings[name, default: InterfaceSettings()].kind = kind }
        for (name, bytes) in interfaceBudgets { settings[name, default: InterfaceSettings()].dailyBudgetBytes = bytes }
        return settings
    }

    public init() {}

    /// The probe set of a round: built-ins (unless disabled) followed by custom probes.
    public var probes: [ProbeSpec] {
        (useDefaultProbes ? DefaultProbes.all : []) + customProbes
    }

    public static let defaultPath = "/etc/uplinkd/uplinkd.conf"
}

/// A configuration mistake, located: file, line and key.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let key: String?
    public let message: String

    public init(file: String, line: Int?, key: String?, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "key '\(key)': " }
        return text + message
    }
}
