/// How the agent schedules probes, judges rounds and picks the primary uplink
/// (`[agent]` in the configuration). The defaults suit a metered cellular link: a
/// probe round every 5 minutes costs about 2 KiB, so under 1 MiB a day.
public struct AgentPolicy: Sendable, Equatable {
    /// Probe interval while an uplink is stable.
    public var intervalMilliseconds = 300_000
    /// First interval while an uplink is suspect; doubles up to `intervalMilliseconds`.
    public var suspectIntervalMilliseconds = 1_000
    /// Consecutive failed rounds before an `online` uplink is given up.
    public var failuresToLeaveOnline = 2
    /// Consecutive validated rounds before a non-online uplink is `online` again.
    public var successesToReturnOnline = 2
    /// How long an uplink that just came back must stay online before it takes the
    /// primary role back from another online uplink.
    public var holdDownMilliseconds = 30_000
    /// Probe online uplinks periodically (false: only on link events while online).
    public var probeWhenOnline = true
    /// Preference order for the primary: interface names and kinds, first wins.
    public var priority: [PriorityEntry] = [.kind(.ethernet), .kind(.wifi), .kind(.wwan)]
    /// Daily probe byte budget applied to wwan uplinks without their own budget.
    public var wwanDailyBudgetBytes: Int?
    public var stateFilePath = "/run/uplinkd/state"
    public var hooksDirectory = "/etc/uplinkd/hooks.d"
    /// Time limit of one hook (TERM at the limit, KILL 5 s later).
    public var hookTimeoutMilliseconds = 30_000

    public init() {}

    /// Rank of an uplink in the priority list (lower is preferred); names beat kinds.
    public func rank(of name: InterfaceName, kind: InterfaceKind) -> Int {
        if let index = priority.firstIndex(of: .interface(name)) { return index }
        if let index = priority.firstIndex(of: .kind(kind)) { return index }
        return priority.count
    }
}

/// One entry of `priority`: an interface by name, or every uplink of a kind.
public enum PriorityEntry: Sendable, Equatable, CustomStringConvertible {
    case interface(InterfaceName)
    case kind(InterfaceKind)

    public var description: String {
        switch self {
        case .interface(let name): return name.value
        case .kind(let kind): return kind.rawValue
        }
    }
}
