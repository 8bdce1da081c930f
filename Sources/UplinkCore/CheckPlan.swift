/// One probe to send: which probe, through which interface, over which family.
public struct ProbeRequest: Sendable, Equatable {
    public var interface: InterfaceName
    public var family: AddressFamily
    public var probe: ProbeSpec
    /// Where the probe's host name resolved through the uplink's own DNS; the prober
    /// connects only there. Empty for an IP-literal URL.
    public var addresses: [IPAddress]

    public init(interface: InterfaceName, family: AddressFamily, probe: ProbeSpec, addresses: [IPAddress] = []) {
        self.interface = interface
        self.family = family
        self.probe = probe
        self.addresses = addresses
    }

    /// The host name to resolve, or nil when the URL holds an address.
    public var hostNeedingResolution: String? {
        IPAddress(probe.url.host) == nil ? probe.url.host : nil
    }
}

/// What came back for one probe request, with its cost.
public struct ProbeResult: Sendable, Equatable {
    public var request: ProbeRequest
    public var outcome: ProbeOutcome
    public var elapsedMilliseconds: Int
    public var bytes: Int

    public init(request: ProbeRequest, outcome: ProbeOutcome, elapsedMilliseconds: Int, bytes: Int) {
        self.request = request
        self.outcome = outcome
        self.elapsedMilliseconds = elapsedMilliseconds
        self.bytes = bytes
    }
}

/// Plans a one-shot check and turns its results into a report. Pure: the adapters
/// gather link facts and run the probes; this decides.
public enum CheckPlanner {
    /// The probe requests for one interface, given what its link facts allow.
    public static func requests(for interface: InterfaceName, link: LinkEvaluator.Result,
                                probes: [ProbeSpec]) -> [ProbeRequest] {
        guard case .probe(let families) = link else { return [] }
        return families.flatMap { family in
            probes.compactMap { probe in
                // An IPv6 literal cannot be reached over IPv4 and vice versa.
                if let literal = IPAddress(probe.url.host), literal.family != family { return nil }
                return ProbeRequest(interface: interface, family: family, probe: probe)
            }
        }
    }

    public static func report(interface: InterfaceName, kind: InterfaceKind, link: LinkEvaluator.Result,
                              results: [ProbeResult], thresholdPercent: Int, elapsedMilliseconds: Int,
                              dns: DNSServers? = nil,
                              knownAnswers: [AddressFamily: KnownAnswerResult] = [:]) -> CheckReport {
        let families: [AddressFamily]
        switch link {
        case .down(let reason):
            return CheckReport(interface: interface.value, kind: kind, assessment: Assessment(.down, reason: reason),
                               elapsedMilliseconds: elapsedMilliseconds, dns: dns)
        case .probe(let probed):
            families = probed
        }
        var perFamily: [AddressFamily: Assessment] = [:]
        var probeReports: [ProbeReport] = []
        for family in families {
            let familyResults = results.filter { $0.request.family == family && $0.request.interface == interface }
            let classes = familyResults.map { Classifier.classify($0.outcome, for: $0.request.probe) }
            if familyResults.isEmpty {
                perFamily[family] = Assessment(.limited, reason: "no-probe-for-family")
            } else {
                perFamily[family] = Aggregator.assess(classes, thresholdPercent: thresholdPercent)
            }
            if case .mismatch = knownAnswers[family] {
                // The resolver lies about a name whose answer is known: whatever the
                // probes saw, this family's answers come from something local.
                perFamily[family] = Assessment(.captive, reason: "dns-hijack")
            }
            for (result, judgement) in zip(familyResults, classes) {
                var status: Int?
                if case .response(let response) = result.outcome { status = response.status }
                probeReports.append(ProbeReport(name: result.request.probe.name, url: result.request.probe.url.description,
                                                family: family, judgement: judgement, status: status,
                                                elapsedMilliseconds: result.elapsedMilliseconds, bytes: result.bytes,
                                                addresses: result.request.addresses))
            }
        }
        let assessment = Aggregator.best(of: perFamily) ?? Assessment(.unknown, reason: "no-probes")
        return CheckReport(interface: interface.value, kind: kind, assessment: assessment, families: perFamily,
                           probes: probeReports, elapsedMilliseconds: elapsedMilliseconds, dns: dns)
    }

    /// Exit status for several interfaces: the highest of their statuses, so 0 means
    /// every named interface is online.
    public static func exitStatus(for reports: [CheckReport]) -> Int32 {
        reports.map { $0.assessment.verdict.exitStatus }.max() ?? 0
    }
}
