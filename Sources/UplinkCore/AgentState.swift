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
    public var bytesToday: Int
    public var budgetBytes: Int?
    public var budgetExhausted: Bool
    public var portalURL: String?
    public var ipv4Reason: Reason?
    public var ipv6Reason: Reason?
    /// Where the uplink's DNS servers came from in its last round (nil: none found, or
    /// no round needed a name).
    public var dnsSource: DNSSource?
    /// Whether its probe bytes cost money (`metered`).
    public var metered: Bool
    public var quality: UplinkQualityStatus
    /// The captive-portal API's session (RFC 8908): when it ends, data left.
    public var session = CaptivePortalSession()
    /// The modem that carries the uplink, when ModemManager knows one.
    public var modem: ModemStatus?

    public init(interface: InterfaceName, kind: InterfaceKind, verdict: Verdict, reason: Reason, sinceWallSeconds: Int,
                ipv4: Verdict? = nil, ipv6: Verdict? = nil, bytesToday: Int = 0, budgetBytes: Int? = nil,
                budgetExhausted: Bool = false, portalURL: String? = nil, ipv4Reason: Reason? = nil,
                ipv6Reason: Reason? = nil, dnsSource: DNSSource? = nil, metered: Bool = false,
                quality: UplinkQualityStatus = UplinkQualityStatus(), session: CaptivePortalSession = CaptivePortalSession(),
                modem: ModemStatus? = nil) {
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
public struct UplinkQualityStatus: Sendable, Equatable {
    public var figures: QualityFigures
    public var degraded: Bool
    public var flapPenalty: Int
    public var suppressed: Bool

    public init(figures: QualityFigures = QualityFigures(), degraded: Bool = false, flapPenalty: Int = 0,
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

    public init(primary: InterfaceName?, uplinks: [UplinkStatus], writtenWallSeconds: Int, pid: Int, stopped: Bool = false,
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
    public func sameContent(as other: AgentState) -> Bool {
        primary == other.primary && uplinks == other.uplinks && stopped == other.stopped
            && familyPrimaries == other.familyPrimaries
    }

    public var json: JSONValue {
        .object([
            ("primary", .optional(primary?.value)),
            ("primary_ipv4", .optional(familyPrimaries[.ipv4]?.value)),
            ("primary_ipv6", .optional(familyPrimaries[.ipv6]?.value)),
            ("written", .int(writtenWallSeconds)),
            ("pid", .int(pid)),
            ("stopped", .bool(stopped)),
            ("uplinks", .array(uplinks.map { uplink in
                .object([
                    ("interface", .string(uplink.interface.value)),
                    ("kind", .string(uplink.kind.rawValue)),
                    ("verdict", .string(uplink.verdict.rawValue)),
                    ("reason", .string(uplink.reason.rawValue)),
                    ("since", .int(uplink.sinceWallSeconds)),
                    ("portal_url", .optional(uplink.portalURL)),
                    ("families", .object([
                        ("ipv4", AgentState.familyJSON(uplink.ipv4, uplink.ipv4Reason)),
                        ("ipv6", AgentState.familyJSON(uplink.ipv6, uplink.ipv6Reason)),
                    ])),
                    ("dns_source", .optional(uplink.dnsSource?.rawValue)),
                    ("dns_per_uplink", .bool(uplink.dnsSource?.isPerUplink ?? false)),
                    ("bytes_today", .int(uplink.bytesToday)),
                    ("budget_bytes", uplink.budgetBytes.map(JSONValue.int) ?? .null),
                    ("budget_exhausted", .bool(uplink.budgetExhausted)),
                    ("metered", .bool(uplink.metered)),
                    ("rtt_ms", uplink.quality.figures.roundTripMilliseconds.map(JSONValue.int) ?? .null),
                    ("rtt_variation_ms", uplink.quality.figures.roundTripVariationMilliseconds.map(JSONValue.int) ?? .null),
                    ("loss_pct", uplink.quality.figures.lossPercent.map(JSONValue.int) ?? .null),
                    ("degraded", .bool(uplink.quality.degraded)),
                    ("flap_penalty", .int(uplink.quality.flapPenalty)),
                    ("suppressed", .bool(uplink.quality.suppressed)),
                    ("session_ends", uplink.session.endsWallSeconds.map(JSONValue.int) ?? .null),
                    ("session_bytes_remaining", uplink.session.bytesRemaining.map(JSONValue.int) ?? .null),
                    ("modem", uplink.modem?.json ?? .null),
                ])
            })),
        ])
    }
}

extension AgentState {
    /// The exit status of `uplinkd status` for scripts: 0 the agent runs and there is
    /// a primary; 1 it runs and no uplink is online; 3 it does not run (stopped, or its
    /// process is gone), so the file's facts are stale. (69, no readable state file,
    /// is the command's own.) The file is rewritten on every change, so while the
    /// agent runs its content is current whatever its age.
    public func statusExitCode(agentRunning: Bool) -> Int32 {
        guard agentRunning && !stopped else { return 3 }
        return primary == nil ? 1 : 0
    }

    static func familyJSON(_ verdict: Verdict?, _ reason: Reason?) -> JSONValue {
        guard let verdict else { return .null }
        return .object([("verdict", .string(verdict.rawValue)), ("reason", .optional(reason?.rawValue))])
    }
}
