/// How the agent picks the primary uplink and where it publishes (`[agent]` in the
/// configuration); how each uplink is probed is in `ProbingSettings`.
package struct AgentPolicy: Sendable, Equatable {
    /// How long an uplink that just came back must stay online before it takes the
    /// primary role back from another online uplink.
    package var holdDownMilliseconds = 30_000
    /// A backup whose last validated round is older than this is verified with one
    /// short probe before it becomes primary.
    package var verifyAgeMilliseconds = 5_000
    /// uplinkd's own table, rules and protocol id: its routes are never counted as an
    /// uplink's, and adding or removing one is no doubt about the uplink.
    package var routing = RoutingSettings()
    /// Preference order for the primary: interface names and kinds, first wins.
    package var priority: [PriorityEntry] = [.kind(.ethernet), .kind(.wifi), .kind(.wwan)]
    /// Daily probe byte budget applied to wwan uplinks without their own budget.
    package var wwanDailyBudgetBytes: Int?
    package var stateFilePath = "/run/uplinkd/state"
    /// The state file's format: 2, or 1 for readers not yet moved (until the date uplinkd-state(5) gives).
    package var stateFileFormat = StateFileFormat.version
    package var hooksDirectory = "/etc/uplinkd/hooks.d"
    /// Hooks other packages install (uplinkd's own are not here: they are enabled
    /// by a link in `hooksDirectory`). A same-named entry of `hooksDirectory`
    /// overrides one here, and a link from there to /dev/null masks it.
    package var vendorHooksDirectory = "/usr/lib/uplinkd/hooks.d"
    /// The least important log lines written (`--verbose` goes further).
    package var logLevel = LogLevel.notice
    /// systemd hears "ready" once every uplink has a first verdict, or after this long.
    package var readyTimeoutMilliseconds = 30_000
    /// Time limit of one hook (TERM at the limit, KILL 5 s later).
    package var hookTimeoutMilliseconds = 30_000

    /// Which healthy uplinks a degraded primary hands over to.
    package var avoidDegraded = AvoidDegraded.unmetered
    /// Marks of a degraded uplink (`degraded-loss`, `degraded-rtt`).
    package var quality = QualityThresholds()
    /// Degradation (and health after it) must last this long before the primary moves.
    package var degradedForMilliseconds = 60_000
    package var damping = DampingSettings()
    package var modems = ModemSettings()
    /// When a preferred uplink that came back takes the primary role back.
    package var failback = Failback.delayed
    /// Where data plans are kept across restarts, and how often.
    package var plans = PlanFileSettings()
    /// Where the outage journal is kept (`journal-file`), and how much of it.
    package var journal = JournalSettings()

    package init() {}

    /// Rank of an uplink in the priority list (lower is preferred); names beat kinds.
    package func rank(of name: InterfaceName, kind: InterfaceKind) -> Int {
        if let index = priority.firstIndex(of: .interface(name)) { return index }
        if let index = priority.firstIndex(of: .kind(kind)) { return index }
        return priority.count
    }
}

/// One entry of `priority`: an interface by name, or every uplink of a kind.
package enum PriorityEntry: Sendable, Equatable, CustomStringConvertible {
    case interface(InterfaceName)
    case kind(InterfaceKind)

    package var description: String {
        switch self {
        case .interface(let name): return name.value
        case .kind(let kind): return kind.rawValue
        }
    }
}

/// `avoid-degraded`: whether a degraded primary hands over to a healthy uplink, and to
/// which. The default moves only to unmetered uplinks: a lossy primary is still better
/// than paying per byte for a healthy cellular backup.
package enum AvoidDegraded: String, Sendable, CaseIterable {
    case no
    case unmetered
    case any

    func allows(metered: Bool) -> Bool {
        switch self {
        case .no: return false
        case .unmetered: return !metered
        case .any: return true
        }
    }
}

/// `log-level`: the least important lines the agent logs, as syslog names them.
package enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, notice, warning, error

    /// The syslog (and sd-daemon) priority: what `journalctl -p` filters on; the
    /// smaller, the more important.
    package var syslogPriority: Int {
        switch self {
        case .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        }
    }

    /// Less important first: `debug < error`.
    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.syslogPriority > rhs.syslogPriority
    }
}

/// How the agent listens to ModemManager (`[agent]`).
package struct ModemSettings: Sendable, Equatable {
    /// When to follow ModemManager on the system bus (`modemmanager`).
    package var use = ModemManagerUse.auto
    /// How often modems refresh their signal figures (ModemManager's Signal.Setup).
    package var signalIntervalMilliseconds = 30_000

    package init() {}

    /// Whether ModemManager's word counts for an interface of `kind` tied to a modem
    /// by `binding`: a cellular interface (unless `modem = none`) or one tied to a
    /// modem by its equipment identifier, unless `modemmanager = no`. The agent follows
    /// ModemManager once it has such an uplink (at once with `modemmanager = yes`), so
    /// a gateway without a modem never looks for a system bus.
    package func wantsModem(kind: InterfaceKind, binding: ModemBinding?) -> Bool {
        guard use != .never else { return false }
        if case .equipment? = binding { return true }
        return kind == .wwan && binding == nil
    }
}

/// `modemmanager = auto | yes | no`: follow ModemManager where a modem could be (a
/// cellular uplink, or one tied to a modem), always, or never.
package enum ModemManagerUse: String, Sendable, Equatable {
    case auto
    case always = "yes"
    case never = "no"
}
