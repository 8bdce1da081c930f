/// One uplink as recorded in the state file.
public struct UplinkStatus: Sendable, Equatable {
    public var interface: InterfaceName
    public var kind: InterfaceKind
    public var verdict: Verdict
    public var reason: Reason
    /// Wall-clock seconds since the epoch when the verdict was reached.
    public var sinceWallSeconds: Int
    public var ipv4: Verdict?
    public var ipv6: Verdict?
    package var bytesToday: Int
    package var budgetBytes: Int?
    package var budgetExhausted: Bool
    public var portalURL: String?
    public var ipv4Reason: Reason?
    public var ipv6Reason: Reason?
    /// Where the uplink's DNS servers came from in its last round (nil: none found, or
    /// no round needed a name).
    package var dnsSource: DNSSource?
    /// Whether its probe bytes cost money (`metered`).
    public var metered: Bool
    package var quality: UplinkQualityStatus
    /// The captive-portal API's session (RFC 8908): when it ends, data left.
    package var session = CaptivePortalSession()
    /// The modem that carries the uplink, when ModemManager knows one.
    package var modem: ModemStatus?
    /// Its data plan, when it has one and counting began.
    package var plan: PlanStatus?
    /// How it waits as a backup (`standby`).
    package var standby: Standby = .hot
    /// Connections pinned to it (`[flows] pinning`), as last counted.
    package var pinnedConnections: Int?

    package init(interface: InterfaceName, kind: InterfaceKind, verdict: Verdict, reason: Reason, sinceWallSeconds: Int,
                ipv4: Verdict? = nil, ipv6: Verdict? = nil, bytesToday: Int = 0, budgetBytes: Int? = nil,
                budgetExhausted: Bool = false, portalURL: String? = nil, ipv4Reason: Reason? = nil,
                ipv6Reason: Reason? = nil, dnsSource: DNSSource? = nil, metered: Bool = false,
                quality: UplinkQualityStatus = UplinkQualityStatus(), session: CaptivePortalSession = CaptivePortalSession(),
                modem: ModemStatus? = nil, plan: PlanStatus? = nil, standby: Standby = .hot, pinnedConnections: Int? = nil) {
        self.pinnedConnections = pinnedConnections
        self.plan = plan
        self.standby = standby
        self.session = session
        self.modem = modem
        self.metered = metered
        self.quality = quality
        self.ipv4Reason = ipv4Reason
        self.ipv6Reason = ipv6Reason
        self.dnsSource = dnsSource
        self.interface = interface
        self.kind = kind
        self.verdict = verdict
        self.reason = reason
        self.sinceWallSeconds = sinceWallSeconds
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.bytesToday = bytesToday
        self.budgetBytes = budgetBytes
        self.budgetExhausted = budgetExhausted
        self.portalURL = portalURL
    }
}

/// How well an uplink carries traffic and how calm it has been, as published: the
/// figures of its best online family, whether they mark it degraded, and its flap
/// damping.
package struct UplinkQualityStatus: Sendable, Equatable {
    package var figures: QualityFigures
    package var degraded: Bool
    package var flapPenalty: Int
    package var suppressed: Bool

    package init(figures: QualityFigures = QualityFigures(), degraded: Bool = false, flapPenalty: Int = 0,
                suppressed: Bool = false) {
        self.figures = figures
        self.degraded = degraded
        self.flapPenalty = flapPenalty
        self.suppressed = suppressed
    }
}

/// The agent's published state: what `uplinkd status` and other services read.
public struct AgentState: Sendable, Equatable {
    public var primary: InterfaceName?
    public var uplinks: [UplinkStatus]
    /// Wall-clock seconds when the state was written.
    public var writtenWallSeconds: Int
    /// The agent's process id, so readers can tell whether it still runs.
    public var pid: Int
    /// Whether the agent stopped (the final state written on TERM/INT).
    public var stopped: Bool
    /// The primary of each family that has one (it differs from `primary` when an
    /// uplink carries one family but not the other).
    public var familyPrimaries: [AddressFamily: InterfaceName] = [:]
    /// The number of the latest decision (hook event) since the agent started.
    public var decision = 0
    /// Every decision up to this one has had its hooks run: when it equals `decision`,
    /// what the hooks do (the routes) matches the rest of the state.
    public var hooksDone = 0
    /// With `[flows] pinning`: the uplinks new connections are shared out to, with
    /// their weights (`eth0:3,wlan0:1`); nil without pinning.
    public var spread: String?
    /// The primary in doubt that new connections avoid while a round confirms it.
    public var provisional: InterfaceName?

    package init(primary: InterfaceName?, uplinks: [UplinkStatus], writtenWallSeconds: Int, pid: Int, stopped: Bool = false,
                familyPrimaries: [AddressFamily: InterfaceName] = [:]) {
        self.primary = primary
        self.uplinks = uplinks
        self.writtenWallSeconds = writtenWallSeconds
        self.pid = pid
        self.stopped = stopped
        self.familyPrimaries = familyPrimaries
    }

    /// Equality of content, ignoring when and by whom it was written: the file is
    /// replaced only when this changes.
    package func sameContent(as other: AgentState) -> Bool {
        primary == other.primary && uplinks == other.uplinks && stopped == other.stopped
            && familyPrimaries == other.familyPrimaries && decision == other.decision && hooksDone == other.hooksDone
            && spread == other.spread && provisional == other.provisional
    }

    /// `status --json`'s object, which the MQTT `state` topic carries too: one encoder
    /// for both. `ageSeconds` and `running` are what the reader knows (`status` reads
    /// them from the file's age and the process table; the agent itself: 0 and true).
    package func statusJSON(ageSeconds: Int, running: Bool) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members.insert(("age_seconds", .int(ageSeconds)), at: 0)
        members.insert(("agent_running", .bool(running)), at: 1)
        return .object(members)
    }

    /// The node's facts (`StateFacts.node`), then its uplinks.
    public var json: JSONValue {
        .object(StateFacts.node.map { ($0.name, $0.value(self).json) } + [("uplinks", .array(uplinks.map(\.json)))])
    }
}

extension AgentState {
    /// The exit status of `uplinkd status` for scripts: 0 the agent runs and there is
    /// a primary; 1 it runs and no uplink is online; 3 it does not run (stopped, or its
    /// process is gone), so the file's facts are stale. (69, no readable state file,
    /// is the command's own.) The file is rewritten on every change, so while the
    /// agent runs its content is current whatever its age.
    package func statusExitCode(agentRunning: Bool) -> Int32 {
        guard agentRunning && !stopped else { return 3 }
        return primary == nil ? 1 : 0
    }

    static func familyJSON(_ verdict: Verdict?, _ reason: Reason?) -> JSONValue {
        guard let verdict else { return .null }
        return .object([("verdict", .string(verdict.rawValue)), ("reason", .optional(reason?.rawValue))])
    }
}

extension UplinkStatus {
    /// One uplink as in `status --json`'s `uplinks` array (and an MQTT uplink topic):
    /// `interface` and its facts (`StateFacts.uplink`), then the objects readers of the
    /// first JSON found the families, the modem and the plan in, kept until format 1 goes.
    public var json: JSONValue {
        let facts: [(String, JSONValue)] = StateFacts.uplink.map { ($0.name, $0.value(self).json) }
        let kept: [(String, JSONValue)] = [
            ("families", .object([
                ("ipv4", AgentState.familyJSON(ipv4, ipv4Reason)),
                ("ipv6", AgentState.familyJSON(ipv6, ipv6Reason)),
            ])),
            ("modem", modem?.json ?? .null),
            ("plan", plan?.json ?? .null),
        ]
        return .object([("interface", .string(interface.value))] + facts + kept)
    }
}
