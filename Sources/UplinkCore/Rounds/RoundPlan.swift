/// Why a round runs, which decides how much it sends and what its result may do.
package enum RoundPurpose: String, Sendable, CaseIterable {
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

/// One probe round as the core asks for it, with everything the adapter needs to run
/// it and nothing to look up on the side: the uplink, its interface index (per-link
/// DNS state files are keyed by it), its kind (for the report), what its link allows
/// (the families to probe, or why nothing can be probed), the probes, how they are
/// sent, the time limits, where DNS servers come from, and the answers it may reuse.
package struct RoundPlan: Sendable, Equatable {
    package var interface: InterfaceName
    package var index: Int
    package var kind: InterfaceKind
    package var link: LinkEvaluator.Result
    package var purpose: RoundPurpose
    package var probes: [ProbeSpec]
    /// Light and verification rounds pick each family's probe from that family's own
    /// pool (an endpoint can fail over one family only); empty: `probes` for all.
    package var probesByFamily: [AddressFamily: [ProbeSpec]]
    package var thresholdPercent: Int
    /// Time limit of each probe's HTTP exchange.
    package var timeoutMilliseconds: Int
    /// Time limit of each name lookup.
    package var dnsTimeoutMilliseconds: Int
    /// Answers still valid from earlier rounds: names found here are not resolved again.
    package var cachedAnswers: [DNSAnswerCache.Key: [IPAddress]]
    /// How probes are sent besides the time limit: body cap, scheme rule, User-Agent,
    /// CA file (`[check]`).
    package var transport: ProbeSettings
    /// `[dns]`: where the uplink's servers come from, the hijack check, `known-answer`.
    package var dns: DNSSettings
    /// `[interface NAME] dns`: servers given by hand, used before any discovered.
    package var configuredDNSServers: [IPAddress]?
    /// Time limit of each probe's external validator.
    package var validatorTimeoutMilliseconds: Int
    /// Whether the network's captive-portal API is asked beside the probes: full
    /// rounds, unless `captive-portal-api = no`.
    package var asksCaptivePortalAPI: Bool

    /// Whether `[dns] known-answer` is checked: hijack evidence, a full round's
    /// business (light and verification rounds stay one HTTP exchange).
    package var checksKnownAnswer: Bool { purpose == .full }

    /// How this round's probes are sent: its time limit, and a liveness round's bare
    /// handshakes.
    package var probeSettings: ProbeSettings {
        var settings = transport
        settings.timeoutMilliseconds = timeoutMilliseconds
        settings.handshakeOnly = purpose == .liveness
        return settings
    }

    /// The probes to send over `family`.
    package func probes(for family: AddressFamily) -> [ProbeSpec] {
        probesByFamily[family] ?? probes
    }

    /// The rest (how probes are sent, DNS, validators, the captive-portal API) comes
    /// from `configuration`.
    package init(interface: InterfaceName, index: Int, kind: InterfaceKind, link: LinkEvaluator.Result,
                purpose: RoundPurpose = .full, probes: [ProbeSpec], thresholdPercent: Int,
                timeoutMilliseconds: Int, dnsTimeoutMilliseconds: Int,
                cachedAnswers: [DNSAnswerCache.Key: [IPAddress]] = [:],
                probesByFamily: [AddressFamily: [ProbeSpec]] = [:], configuration: Configuration) {
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
        transport = ProbeSettings(configuration: configuration, timeoutMilliseconds: timeoutMilliseconds)
        dns = configuration.dns
        configuredDNSServers = configuration.interfaces[interface]?.dnsServers
        validatorTimeoutMilliseconds = configuration.validatorTimeoutMilliseconds
        asksCaptivePortalAPI = purpose == .full && configuration.useCaptivePortalAPI
    }

    /// The probe requests over every family the link allows, names this round may
    /// reuse already pinned to their answers.
    package var requests: [ProbeRequest] {
        var requests = RoundJudge.requests(for: interface, link: link, probes: probes(for:))
        for index in requests.indices {
            guard let host = requests[index].hostNeedingResolution,
                  let cached = cachedAnswers[DNSAnswerCache.Key(host: host, family: requests[index].family)] else { continue }
            requests[index].addresses = cached
        }
        return requests
    }

    /// The families whose `known-answer` lookup this round makes, given its requests.
    package func knownAnswerFamilies(_ requests: [ProbeRequest]) -> [AddressFamily] {
        guard checksKnownAnswer, let known = dns.knownAnswer else { return [] }
        return Set(requests.map(\.family)).intersection(known.families).sorted { $0.rawValue < $1.rawValue }
    }

    /// A one-shot full round with the configured ceilings (`uplinkd check`).
    package static func check(_ configuration: Configuration, interface: InterfaceName, index: Int,
                             kind: InterfaceKind, link: LinkEvaluator.Result) -> RoundPlan {
        let settings = configuration.probingSettings(for: interface, kind: kind,
                                                     metered: configuration.isMetered(interface, kind: kind))
        return RoundPlan(interface: interface, index: index, kind: kind, link: link, purpose: .full,
                         probes: settings.probes(from: configuration.probes),
                         thresholdPercent: settings.successThresholdPercent,
                         timeoutMilliseconds: settings.timeoutMilliseconds,
                         dnsTimeoutMilliseconds: configuration.dns.timeoutMilliseconds, configuration: configuration)
    }
}
