/// One probe's result as reported (no secrets: the Authorization header is never here).
package struct ProbeReport: Sendable, Equatable {
    package var name: String
    package var url: String
    package var family: AddressFamily
    package var judgement: ProbeClass
    package var status: Int?
    public var elapsedMilliseconds: Int
    /// Bytes on the wire for this probe (request and response, headers included).
    package var bytes: Int
    /// The addresses the host name was pinned to (empty for an IP-literal URL).
    package var addresses: [IPAddress]
    /// The host name, when the URL has one (not an address).
    package var host: String?
    /// Lookup time and answer TTL, when this round looked the name up.
    package var dnsMilliseconds: Int?
    package var dnsTTLSeconds: Int?
    /// The TCP handshake completed.
    package var connected = false
    /// How long the handshake took from the start of the exchange, when it completed.
    package var connectMilliseconds: Int?

    /// How long the exchange was allowed to take, when known (the agent's rounds):
    /// a round confirming a doubt may give up long before a lost SYN's retransmission.
    package var exchangeLimitMilliseconds: Int?

    /// The HTTP exchange alone (elapsed time without the lookup).
    package var exchangeMilliseconds: Int { elapsedMilliseconds - (dnsMilliseconds ?? 0) }

    package init(name: String, url: String, family: AddressFamily, judgement: ProbeClass, status: Int?,
                elapsedMilliseconds: Int, bytes: Int, addresses: [IPAddress] = [], host: String? = nil,
                dnsMilliseconds: Int? = nil, dnsTTLSeconds: Int? = nil) {
        self.addresses = addresses
        self.host = host
        self.dnsMilliseconds = dnsMilliseconds
        self.dnsTTLSeconds = dnsTTLSeconds
        self.name = name
        self.url = url
        self.family = family
        self.judgement = judgement
        self.status = status
        self.elapsedMilliseconds = elapsedMilliseconds
        self.bytes = bytes
    }
}

/// The answer of `uplinkd check` for one interface.
public struct RoundReport: Sendable, Equatable {
    public var interface: InterfaceName
    public var kind: InterfaceKind
    public var assessment: Assessment
    public var families: [AddressFamily: Assessment]
    package var probes: [ProbeReport]
    public var elapsedMilliseconds: Int
    /// The uplink's DNS servers as used for this check (nil when no name needed them
    /// or the link was down before discovery).
    package var dns: DNSServers?
    /// What kind of round this was (`check` always runs full rounds).
    package var purpose: RoundPurpose = .full
    /// Every probe of every look (see `SecondLook`), as sent: what quality is
    /// measured from. `probes` holds the last look, with earlier successes counted.
    package var lookedProbes: [ProbeReport]
    /// Rounds this report stands for.
    package var looks = 1
    /// What the network's captive-portal API said, when it announced one (full rounds).
    package var captivePortal: CaptivePortalCheck?
    /// The modem that carries the uplink, when ModemManager knows one.
    package var modem: ModemStatus?

    /// Bytes the round put on the wire: its probes and its captive-portal API request.
    package var totalBytes: Int {
        probes.reduce(0) { $0 + $1.bytes } + (captivePortal?.bytes ?? 0)
    }

    package init(interface: InterfaceName, kind: InterfaceKind, assessment: Assessment,
                families: [AddressFamily: Assessment] = [:], probes: [ProbeReport] = [], elapsedMilliseconds: Int,
                dns: DNSServers? = nil) {
        self.dns = dns
        self.interface = interface
        self.kind = kind
        self.assessment = assessment
        self.families = families
        self.probes = probes
        self.lookedProbes = probes
        self.elapsedMilliseconds = elapsedMilliseconds
    }

    public var json: JSONValue {
        var familyMembers: [(String, JSONValue)] = []
        for family in AddressFamily.allCases {
            guard let assessment = families[family] else { continue }
            familyMembers.append((family.rawValue, .object([
                ("verdict", .string(assessment.verdict.rawValue)),
                ("reason", .string(assessment.reason.rawValue)),
                ("portal_url", .optional(assessment.portalURL)),
                ("quality", QualityFigures.of(lookedProbes.filter { $0.family == family }).json),
            ])))
        }
        let probeValues: [JSONValue] = probes.map { probe in
            .object([
                ("name", .string(probe.name)),
                ("url", .string(probe.url)),
                ("family", .string(probe.family.rawValue)),
                ("result", .string(probe.judgement.reason.rawValue)),
                ("status", probe.status.map(JSONValue.int) ?? .null),
                ("elapsed_ms", .int(probe.elapsedMilliseconds)),
                ("bytes", .int(probe.bytes)),
                ("addresses", .array(probe.addresses.map { .string($0.description) })),
                ("connect_ms", probe.connectMilliseconds.map(JSONValue.int) ?? .null),
            ])
        }
        return .object([
            ("interface", .string(interface.value)),
            ("kind", .string(kind.rawValue)),
            ("verdict", .string(assessment.verdict.rawValue)),
            ("reason", .string(assessment.reason.rawValue)),
            ("portal_url", .optional(assessment.portalURL)),
            ("elapsed_ms", .int(elapsedMilliseconds)),
            ("families", .object(familyMembers)),
            ("quality", QualityFigures.of(lookedProbes).json),
            ("looks", .int(looks)),
            ("dns", dns?.json ?? .null),
            ("captive_portal_api", captivePortal?.json ?? .null),
            ("modem", modem?.json ?? .null),
            ("probes", .array(probeValues)),
        ])
    }

    /// One human line: `wlan0: captive (wifi, redirect) portal http://... in 12 ms`.
    public var humanLine: String {
        var line = "\(interface): \(assessment.verdict.rawValue) (\(kind.rawValue), \(assessment.reason.rawValue))"
        if let portal = assessment.portalURL { line += " portal \(portal)" }
        let familyNotes = AddressFamily.allCases.compactMap { family -> String? in
            guard families.count > 1, let assessment = families[family] else { return nil }
            return "\(family.rawValue) \(assessment.verdict.rawValue)"
        }
        if !familyNotes.isEmpty { line += " [" + familyNotes.joined(separator: ", ") + "]" }
        let quality = QualityFigures.of(lookedProbes)
        if let rtt = quality.roundTripMilliseconds { line += " rtt \(rtt) ms" }
        if let loss = quality.lossPercent, loss > 0 { line += " loss \(loss) % (\(quality.attempts) SYNs)" }
        if let dns, !dns.isPerUplink, probes.contains(where: { !$0.addresses.isEmpty || $0.judgement.reason == .dnsFailed }) {
            line += " (DNS from \(dns.source?.rawValue ?? "nowhere"): not per-uplink)"
        }
        if let api = captivePortal {
            if let status = api.status {
                line += " (captive-portal API: \(status.captive ? "captive" : "not captive")"
                if let seconds = status.secondsRemaining { line += ", \(seconds) s left" }
                if let problem = api.problem { line += "; \(problem)" }
                line += ")"
            } else {
                line += " (captive-portal API \(api.uri): \(api.problem ?? "no answer"))"
            }
        }
        if looks > 1 { line += " after \(looks) looks" }
        if let modem { line += " (\(modem.summary))" }
        return line + " in \(elapsedMilliseconds) ms"
    }
}
