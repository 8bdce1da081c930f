/// Why a round runs, which decides how much it sends and what its result may do.
public enum RoundPurpose: String, Sendable, CaseIterable {
    /// Every probe of the uplink's set in every family, judged by the quorum: the only
    /// round that may change a verdict.
    case full
    /// While online and nothing is suspect: one probe per family, rotating through the
    /// set. A failure only starts a full round.
    case light
    /// One short probe per family of a backup about to become primary.
    case verify
    /// Between light rounds of an online uplink: one bare TCP handshake per family
    /// with a probe's server, no HTTP, closed with a reset (about a fifth of an HTTP
    /// exchange's bytes). A sign of life, no proof of the internet: its failure only
    /// starts a full round.
    case liveness
}

/// One probe round as the core asks for it, with what the adapter needs to run it:
/// the uplink, its interface index (per-link DNS state files are keyed by it), its
/// kind (for the report), what its link allows (the families to probe, or why nothing
/// can be probed), the probes, the time limits and the DNS answers it may reuse.
public struct RoundPlan: Sendable, Equatable {
    public var interface: InterfaceName
    public var index: Int
    public var kind: InterfaceKind
    public var link: LinkEvaluator.Result
    public var purpose: RoundPurpose
    public var probes: [ProbeSpec]
    /// Light and verification rounds pick each family's probe from that family's own
    /// pool (an endpoint can fail over one family only); empty: `probes` for all.
    public var probesByFamily: [AddressFamily: [ProbeSpec]]
    public var thresholdPercent: Int
    /// Time limit of each probe's HTTP exchange.
    public var timeoutMilliseconds: Int
    /// Time limit of each name lookup.
    public var dnsTimeoutMilliseconds: Int
    /// Answers still valid from earlier rounds: names found here are not resolved again.
    public var cachedAnswers: [DNSAnswerCache.Key: [IPAddress]]

    /// The probes to send over `family`.
    public func probes(for family: AddressFamily) -> [ProbeSpec] {
        probesByFamily[family] ?? probes
    }

    public init(interface: InterfaceName, index: Int, kind: InterfaceKind, link: LinkEvaluator.Result,
                purpose: RoundPurpose = .full, probes: [ProbeSpec], thresholdPercent: Int,
                timeoutMilliseconds: Int, dnsTimeoutMilliseconds: Int,
                cachedAnswers: [DNSAnswerCache.Key: [IPAddress]] = [:],
                probesByFamily: [AddressFamily: [ProbeSpec]] = [:]) {
        self.probesByFamily = probesByFamily
        self.interface = interface
        self.index = index
        self.kind = kind
        self.link = link
        self.purpose = purpose
        self.probes = probes
        self.thresholdPercent = thresholdPercent
        self.timeoutMilliseconds = timeoutMilliseconds
        self.dnsTimeoutMilliseconds = dnsTimeoutMilliseconds
        self.cachedAnswers = cachedAnswers
    }

    /// A one-shot full round with the configured ceilings (`uplinkd check`).
    public static func check(_ configuration: Configuration, interface: InterfaceName, index: Int,
                             kind: InterfaceKind, link: LinkEvaluator.Result) -> RoundPlan {
        let settings = configuration.probingSettings(for: interface, kind: kind,
                                                     metered: configuration.isMetered(interface, kind: kind))
        return RoundPlan(interface: interface, index: index, kind: kind, link: link, purpose: .full,
                         probes: settings.probes(from: configuration.probes),
                         thresholdPercent: settings.successThresholdPercent,
                         timeoutMilliseconds: settings.timeoutMilliseconds,
                         dnsTimeoutMilliseconds: configuration.dns.timeoutMilliseconds)
    }
}
