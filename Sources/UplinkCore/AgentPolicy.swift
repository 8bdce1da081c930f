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
    public var priority: [String] = ["ethernet", "wifi", "wwan"]
    /// Daily probe byte budget applied to wwan uplinks without their own budget.
    public var wwanDailyBudgetBytes: Int?
    public var stateFilePath = "/run/uplinkd/state"
    public var hooksDirectory = "/etc/uplinkd/hooks.d"
    /// Time limit of one hook (TERM at the limit, KILL 5 s later).
    public var hookTimeoutMilliseconds = 30_000

    public init() {}

    /// Rank of an uplink in the priority list (lower is preferred); names beat kinds.
    public func rank(of name: String, kind: InterfaceKind) -> Int {
        if let index = priority.firstIndex(of: name) { return index }
        if let index = priority.firstIndex(of: kind.rawValue) { return index }
        return priority.count
    }
}

/// Per-interface settings from `[interface NAME]`.
public struct InterfaceSettings: Sendable, Equatable {
    public var kind: InterfaceKind?
    public var dailyBudgetBytes: Int?

    public init(kind: InterfaceKind? = nil, dailyBudgetBytes: Int? = nil) {
        self.kind = kind
        self.dailyBudgetBytes = dailyBudgetBytes
    }
}

/// A moment as the agent sees it: monotonic time for every decision, wall-clock time
/// only to tell people when something happened.
public struct Instant: Sendable, Equatable {
    public var monotonicMilliseconds: Int
    public var wallSeconds: Int

    public init(monotonicMilliseconds: Int, wallSeconds: Int) {
        self.monotonicMilliseconds = monotonicMilliseconds
        self.wallSeconds = wallSeconds
    }

    public func adding(milliseconds: Int) -> Instant {
        Instant(monotonicMilliseconds: monotonicMilliseconds + milliseconds,
                wallSeconds: wallSeconds + milliseconds / 1_000)
    }
}
