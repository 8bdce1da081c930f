/// Plans a one-shot check and turns its results into a report. Pure: the adapters
/// gather link facts and run the probes; this decides.
package enum RoundJudge {
    /// The probe requests for one interface, given what its link facts allow.
    package static func requests(for interface: InterfaceName, link: LinkEvaluator.Result,
                                probes: [ProbeSpec]) -> [ProbeRequest] {
        requests(for: interface, link: link) { _ in probes }
    }

    /// The probe requests of a round whose probes may differ per family.
    package static func requests(for interface: InterfaceName, link: LinkEvaluator.Result,
                                probes: (AddressFamily) -> [ProbeSpec]) -> [ProbeRequest] {
        guard case .probe(let families) = link else { return [] }
        return families.flatMap { family in
            probes(family).compactMap { probe in
                // An IPv6 literal cannot be reached over IPv4 and vice versa.
                if let literal = IPAddress(probe.url.host), literal.family != family { return nil }
                return ProbeRequest(interface: interface, family: family, probe: probe)
            }
        }
    }

    package static func report(interface: InterfaceName, kind: InterfaceKind, link: LinkEvaluator.Result,
                              results: [ProbeResult], thresholdPercent: Int, elapsedMilliseconds: Int,
                              dns: DNSServers? = nil,
                              knownAnswers: [AddressFamily: KnownAnswerResult] = [:],
                              captivePortal: CaptivePortalCheck? = nil) -> RoundReport {
        let families: [AddressFamily]
        switch link {
        case .down(let reason):
            return RoundReport(interface: interface, kind: kind, assessment: Assessment(.down, reason: reason),
                               elapsedMilliseconds: elapsedMilliseconds, dns: dns)
        case .probe(let probed):
            families = probed
        }
        var perFamily: [AddressFamily: Assessment] = [:]
        var probeReports: [ProbeReport] = []
        for family in families {
            let familyResults = results.filter { $0.request.family == family && $0.request.interface == interface }
            let classes = familyResults.map { Classifier.classify($0.outcome, for: $0.request.probe) }
            perFamily[family] = familyAssessment(familyResults, classes: classes, thresholdPercent: thresholdPercent,
                                                 knownAnswer: knownAnswers[family])
            probeReports += zip(familyResults, classes).map { probeReport($0, judgement: $1, family: family) }
        }
        // The network's own word comes first: an API saying "captive" makes every
        // family captive at once. "Not captive" proves nothing on its own (the portal
        // may still intercept): the probes decide then.
        if let status = captivePortal?.status, status.captive {
            let portalURL = capportPortalURL(status, probed: perFamily)
            for family in perFamily.keys { perFamily[family] = Assessment(.captive, reason: .capport, portalURL: portalURL) }
        }
        for (family, assessment) in perFamily where assessment.verdict == .captive {
            let familyResults = results.filter { $0.request.family == family && $0.request.interface == interface }
            perFamily[family]?.portalIsWISPrLogin = assessment.portalURL.map { wisprServed($0, in: familyResults) } ?? false
        }
        let assessment = Aggregator.best(of: perFamily) ?? Assessment(.unknown, reason: .noProbes)
        var report = RoundReport(interface: interface, kind: kind, assessment: assessment, families: perFamily,
                                 probes: probeReports, elapsedMilliseconds: elapsedMilliseconds, dns: dns)
        report.captivePortal = captivePortal
        return report
    }

    /// Each family is judged on its own probes: a network may intercept one family
    /// and not the other (the captive-portal API, when it says captive, overrules
    /// both afterwards).
    static func familyAssessment(_ results: [ProbeResult], classes: [ProbeClass], thresholdPercent: Int,
                                 knownAnswer: KnownAnswerResult?) -> Assessment {
        if case .mismatch = knownAnswer {
            // The resolver lies about a name whose answer is known: whatever the
            // probes saw, this family's answers come from something local.
            return Assessment(.captive, reason: .dnsHijack)
        }
        guard !results.isEmpty else { return Assessment(.limited, reason: .noProbeForFamily) }
        var assessment = Aggregator.assess(classes, thresholdPercent: thresholdPercent)
        if assessment.reason == .dnsHijack,
           let heard = loginPageHeard(classes, probeURLs: results.map { $0.request.probe.url.description }) {
            assessment.portalURL = heard
        }
        return assessment
    }

    /// Each probe's answer is kept beside the verdict: `check` shows it, and the
    /// quality figures and the second look are made of it.
    static func probeReport(_ result: ProbeResult, judgement: ProbeClass, family: AddressFamily) -> ProbeReport {
        var status: Int?
        switch result.outcome {
        case .response(let response), .dnsHijack(_, let response?): status = response.status
        default: break
        }
        var report = ProbeReport(name: result.request.probe.name, url: result.request.probe.url.description,
                                 family: family, judgement: judgement, status: status,
                                 elapsedMilliseconds: result.elapsedMilliseconds, bytes: result.bytes,
                                 addresses: result.request.addresses,
                                 host: result.request.hostNeedingResolution,
                                 dnsMilliseconds: result.dnsMilliseconds, dnsTTLSeconds: result.dnsTTLSeconds)
        report.connected = result.connected
        report.connectMilliseconds = result.connectMilliseconds
        return report
    }

    /// Where a person logs in when the captive-portal API says the session is held:
    /// the API's https `user-portal-url`; without one, what the probes heard (the
    /// portal URL of the first family they found captive: Location, WISPr LoginURL,
    /// meta refresh, else the probe URL); else none. Never the API's own URI: that
    /// answers JSON, not a login page.
    static func capportPortalURL(_ status: CaptivePortalStatus, probed: [AddressFamily: Assessment]) -> String? {
        if let page = status.userPortalURL { return page }
        for family in AddressFamily.allCases {
            if let assessment = probed[family], assessment.verdict == .captive, let heard = assessment.portalURL { return heard }
        }
        return nil
    }

    /// Behind DNS hijacking every probe reaches the same portal, yet one may hear
    /// nothing better than its own URL (a timeout, a page without a hint) where
    /// another hears the login page: the first login page heard wins.
    static func loginPageHeard(_ classes: [ProbeClass], probeURLs: [String]) -> String? {
        for (probeClass, probeURL) in zip(classes, probeURLs) {
            if case .portal(.dnsHijack, let url?) = probeClass, url != probeURL { return url }
        }
        return nil
    }

    /// Whether a WISPr block in one of `results`' answers names `url` as its LoginURL.
    static func wisprServed(_ url: String, in results: [ProbeResult]) -> Bool {
        results.contains { result in
            let answer: ProbeResponse?
            switch result.outcome {
            case .response(let response): answer = response
            case .dnsHijack(_, let response): answer = response
            case .failure, .handshake: answer = nil
            }
            guard let answer, let login = PortalHints.wisprLoginURL(in: answer.bodyText) else { return false }
            return PortalHints.safeURL(result.request.probe.url.resolving(login)) == url
        }
    }

    /// Exit status for several interfaces: the highest of their statuses, so 0 means
    /// every named interface is online.
    package static func exitStatus(for reports: [RoundReport]) -> Int32 {
        reports.map { $0.assessment.verdict.exitStatus }.max() ?? 0
    }
}
