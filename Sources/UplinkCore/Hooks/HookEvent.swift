/// Something hooks are told about: a verdict change of one uplink, a change of the
/// primary uplink, a repair of the routes, a modem recovery step, a data plan's mark
/// or new cycle, a site outage that ended, or the agent stopping. Every kind carries the same facts by the same rules (the core builds all
/// of them in one place, `AgentCore+Events.swift`); what differs by kind is only which
/// uplink they describe, which primaries they compare, and which uplink was given up:
///
/// | kind      | the uplink described (`interface`...)  | primaries (after / before) | given up (`previousAddresses`) |
/// |-----------|----------------------------------------|----------------------------|--------------------------------|
/// | verdict   | the uplink whose verdict changed       | both the current ones      | that uplink                    |
/// | primary   | the new primary, else the old one      | after / before the change  | the old primary                |
/// | repair    | the primary (none: no interface)       | both the current ones      | none                           |
/// | recover   | the uplink whose modem is recovered    | both the current ones      | none                           |
/// | plan      | the uplink whose data plan it tells of | both the current ones      | none                           |
/// | outage    | the primary that ended it              | both the current ones      | none                           |
/// | stop      | the primary (none: no interface)       | none / the current ones    | the primary                    |
///
/// The described uplink's portal URL (and its WISPr mark) is given only while it is
/// captive.
public struct HookEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case verdict
        case primary
        /// The agent stops (TERM, INT): the last event, after the final state is known.
        case stop
        /// uplinkd's routing entries changed behind its back (or an earlier run left
        /// some): the primaries are unchanged, the routes must be made to match them again.
        case repair
        /// A step of a modem's recovery ladder (`UPLINK_RECOVERY_STEP`): reconnect and
        /// reset are the agent's own, for the record; power-cycle asks a site script to
        /// cut the modem's power.
        case recover
        /// A data plan crossed a mark (`plan-warn`, or 100: the cap) or began a new
        /// cycle (`UPLINK_PLAN_THRESHOLD`).
        case plan
        /// A site outage (a time without any primary) ended: its journal record in
        /// `UPLINK_OUTAGE_*`, one event per outage however often uplinks flapped in it.
        case outage
    }

    public var kind: Kind
    /// The uplink the event is about; a stop event describes the primary, and has
    /// none when there was no primary.
    public var interface: InterfaceName?
    public var interfaceKind: InterfaceKind
    public var verdict: Verdict
    public var previousVerdict: Verdict
    public var reason: Reason
    public var portalURL: String?
    /// `portalURL` is the LoginURL of a WISPr block the portal served.
    package var portalIsWISPrLogin = false
    public var primary: InterfaceName?
    public var previousPrimary: InterfaceName?
    public var wallSeconds: Int
    /// Why the primary changed (primary events).
    package var primaryReason: PrimaryChangeReason?
    /// Primary events: how long before the change the previous primary's last round
    /// validated it; for a primary lost, the most its failure can have gone unseen
    /// (the journal's detection time).
    package var previousPrimaryProvenMillisecondsAgo: Int?
    /// The number of this decision since the agent started (the state file's
    /// `decision`); a queued event merged with a newer one keeps the older number.
    package var decision = 0
    /// The described uplink as the state publishes it (its facts go to the
    /// environment from `StateFacts`); nil when the event names no interface.
    package var uplink: UplinkStatus?
    /// The uplink's addresses, gateways and DNS servers per family.
    package var network = UplinkNetwork()
    /// The primary of each family after and before the event (a verdict event: both
    /// the ones at that moment).
    package var familyPrimaries: [AddressFamily: InterfaceName] = [:]
    package var previousFamilyPrimaries: [AddressFamily: InterfaceName] = [:]
    /// The last addresses of the uplink given up (primary and stop events: the
    /// previous primary; verdict events: the uplink itself), kept after they are gone.
    package var previousAddresses: [IPAddress] = []
    /// Per family, the last addresses of that family's previous primary when the
    /// family's primary moved (primary events): an IPv4 primary can move while the
    /// overall one stays.
    package var previousFamilyAddresses: [AddressFamily: [IPAddress]] = [:]
    /// uplinkd's table, rules and protocol id, for the route-failover hook.
    package var routing = RoutingSettings()
    /// The recovery step a `recover` event tells of.
    package var recoveryStep: RecoveryStep?
    /// What a `plan` event tells of.
    package var planThreshold: PlanThreshold?
    /// The journal's record of the site outage an `outage` event tells of.
    package var outage: JournalRecord?
    /// The configuration file the agent was started with (`--config`), so a hook's
    /// `uplinkd resolve` finds the same DNS servers; nil: the default one.
    package var configurationPath: String?

    package init(kind: Kind, interface: InterfaceName?, interfaceKind: InterfaceKind, verdict: Verdict, previousVerdict: Verdict,
                reason: Reason, portalURL: String?, primary: InterfaceName?, previousPrimary: InterfaceName?, wallSeconds: Int) {
        self.kind = kind
        self.interface = interface
        self.interfaceKind = interfaceKind
        self.verdict = verdict
        self.previousVerdict = previousVerdict
        self.reason = reason
        self.portalURL = portalURL
        self.primary = primary
        self.previousPrimary = previousPrimary
        self.wallSeconds = wallSeconds
    }

    /// The hook's environment (besides PATH). For a primary event the interface fields
    /// describe the new primary, or the previous one when there is none; for a stop
    /// event, the primary at the stop (UPLINK_PRIMARY empty, UPLINK_PREVIOUS_PRIMARY it).
    package var environment: [String] {
        // In parts with their type written out: as one expression, Swift 6.0's type
        // checker gives up on it.
        func text(_ number: Int?) -> String { number.map(String.init) ?? "" }
        func list(_ addresses: [IPAddress]?) -> String { (addresses ?? []).map { "\($0)" }.joined(separator: " ") }
        let verdict: [String] = [
            "UPLINK_EVENT=\(kind.rawValue)",
            "UPLINK_INTERFACE=\(interface?.value ?? "")",
            "UPLINK_KIND=\(interfaceKind.rawValue)",
            "UPLINK_VERDICT=\(self.verdict.rawValue)",
            "UPLINK_PREVIOUS=\(previousVerdict.rawValue)",
            "UPLINK_REASON=\(reason.rawValue)",
            "UPLINK_PORTAL_URL=\(portalURL ?? "")",
            "UPLINK_PORTAL_WISPR=\(portalURL != nil && portalIsWISPrLogin ? "yes" : "no")",
        ]
        let primary: [String] = [
            "UPLINK_PRIMARY=\(self.primary?.value ?? "")",
            "UPLINK_PREVIOUS_PRIMARY=\(previousPrimary?.value ?? "")",
            "UPLINK_TIME=\(wallSeconds)",
            "UPLINK_PRIMARY_REASON=\(primaryReason?.rawValue ?? "")",
            "UPLINK_PRIMARY_IPV4=\(familyPrimaries[.ipv4]?.value ?? "")",
            "UPLINK_PRIMARY_IPV6=\(familyPrimaries[.ipv6]?.value ?? "")",
            "UPLINK_PREVIOUS_PRIMARY_IPV4=\(previousFamilyPrimaries[.ipv4]?.value ?? "")",
            "UPLINK_PREVIOUS_PRIMARY_IPV6=\(previousFamilyPrimaries[.ipv6]?.value ?? "")",
            "UPLINK_PREVIOUS_ADDRESSES=\(list(previousAddresses))",
            "UPLINK_PREVIOUS_IPV4_ADDRESSES=\(list(previousFamilyAddresses[.ipv4]))",
            "UPLINK_PREVIOUS_IPV6_ADDRESSES=\(list(previousFamilyAddresses[.ipv6]))",
        ]
        let rest: [String] = [
            "UPLINK_DECISION=\(decision)",
            "UPLINK_SESSION_SECONDS_REMAINING=\(text(uplink?.session.secondsRemaining(atWallSeconds: wallSeconds)))",
            "UPLINK_CONFIG=\(configurationPath ?? "")",
            "UPLINK_RECOVERY_STEP=\(recoveryStep?.rawValue ?? "")",
            "UPLINK_PLAN_THRESHOLD=\(planThreshold.map { "\($0)" } ?? "")",
        ]
        return verdict + primary + rest + outageEnvironment + network.environment + routing.environment + facts
    }

    /// The site outage's record (empty for other events): when, how long, each
    /// uplink's reasons over it (`eth0:no-carrier wwan0:modem-not-registered`), the
    /// primary it took away, and its number in the journal.
    private var outageEnvironment: [String] {
        let record = outage
        func text(_ number: Int?) -> String { number.map(String.init) ?? "" }
        let reasons = record?.reasons.map { "\($0.interface):\($0.reason.rawValue)" }.joined(separator: " ") ?? ""
        return [
            "UPLINK_OUTAGE_START=\(text(record?.start.wallSeconds))",
            "UPLINK_OUTAGE_END=\(text(record?.end.wallSeconds))",
            "UPLINK_OUTAGE_DURATION_MS=\(text(record?.durationMilliseconds))",
            "UPLINK_OUTAGE_CLOCK_SYNCED=\(record.map { $0.start.synced && $0.end.synced ? "yes" : "no" } ?? "")",
            "UPLINK_OUTAGE_REASONS=\(reasons)",
            "UPLINK_OUTAGE_PRIMARY_BEFORE=\(record?.primaryBefore?.value ?? "")",
            "UPLINK_OUTAGE_SEQUENCE=\(text(record?.sequence))",
        ]
    }

    /// The described uplink's facts, named as everywhere else (`StateFacts`), empty for
    /// what it does not have. The event states the interface, its kind, verdict, reason
    /// and portal itself: it may describe an uplink that is gone, or none.
    private var facts: [String] {
        StateFacts.uplink.compactMap { fact in
            guard !HookEvent.ownFacts.contains(fact.name) else { return nil }
            return "\(fact.environmentName)=\(uplink.map(fact.value)?.environmentText ?? "")"
        }
    }

    private static let ownFacts: Set<String> = ["kind", "verdict", "reason", "portal_url"]
}
