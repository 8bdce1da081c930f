import UplinkCore

/// Runs probe rounds on the event loop, for `check` and for the agent alike: finds the
/// uplink's DNS servers, resolves the probes' host names through them (bound to the
/// uplink), sends every probe over every family in parallel with its answer pinned,
/// asks the network's captive-portal API, and runs the external validators. Every
/// judgement (what a lookup's answer means, what the API said, the known answer, the
/// verdict) is the core's: `NameAnswer`, `CaptivePortalCheck`, `KnownAnswerResult`,
/// `RoundJudge`.
package final class RoundRunner {
    private let loop: EventLoop
    private let prober: ProbeSending
    private let resolver: NameResolving
    private let files: NetworkFileReading
    private let validator: AnswerValidating

    package init(loop: EventLoop, prober: ProbeSending, resolver: NameResolving, files: NetworkFileReading,
                validator: AnswerValidating) {
        self.loop = loop
        self.prober = prober
        self.resolver = resolver
        self.files = files
        self.validator = validator
    }

    /// Runs the round `plan` describes. `completion` gets the report exactly once, on
    /// the loop; its elapsed time counts from `startedMilliseconds` (default: now).
    package func run(_ plan: RoundPlan, startedMilliseconds: Int? = nil, completion: @escaping (RoundReport) -> Void) {
        let started = startedMilliseconds ?? loop.nowMilliseconds
        var servers: DNSServers?
        if case .probe = plan.link {
            // Looked up again every round: a DHCP renewal may have changed them.
            servers = files.dnsServers(for: plan.interface, index: plan.index, configured: plan.configuredDNSServers,
                                       settings: plan.dns)
        }
        let context = RoundContext(plan: plan, dns: servers ?? .none)
        var api: (uri: ProbeURL, family: AddressFamily)?
        if plan.asksCaptivePortalAPI, case .probe(let families) = plan.link, let family = families.first,
           let uri = files.captivePortalAPI(for: plan.interface, index: plan.index, settings: plan.dns) {
            api = (uri, family)
        }
        var probes: [ProbeResult] = [], knownAnswers: [AddressFamily: KnownAnswerResult] = [:]
        var captivePortal: CaptivePortalCheck?
        var remaining = api == nil ? 1 : 2
        let finish = { [loop] in
            remaining -= 1
            guard remaining == 0 else { return }
            var report = RoundJudge.report(
                interface: plan.interface, kind: plan.kind, link: plan.link, results: probes,
                thresholdPercent: plan.thresholdPercent,
                elapsedMilliseconds: loop.nowMilliseconds - started, dns: servers, knownAnswers: knownAnswers,
                captivePortal: captivePortal)
            report.purpose = plan.purpose
            completion(report)
        }
        probe(plan.requests, context: context) { results, answers in
            probes = results
            knownAnswers = answers
            finish()
        }
        if let api {
            askCaptivePortalAPI(api.uri, interface: plan.interface, family: api.family, context: context) { check in
                captivePortal = check
                finish()
            }
        }
    }

    /// One GET of the captive-portal API (RFC 8908): its name resolved through the
    /// uplink's DNS, the body capped. `completion` runs once, on the loop.
    private func askCaptivePortalAPI(_ uri: ProbeURL, interface: InterfaceName, family: AddressFamily,
                                     context: RoundContext, completion: @escaping (CaptivePortalCheck) -> Void) {
        var request = CaptivePortalCheck.request(uri, interface: interface, family: family)
        let settings = CaptivePortalCheck.settings(context.plan.probeSettings)
        let send = { [prober] (request: ProbeRequest, lookupBytes: Int) in
            prober.send(request, settings: settings) { result in
                let check = CaptivePortalCheck(uri: uri, answer: result, lookupBytes: lookupBytes)
                if let problem = check.problem { Log.info("\(interface): captive-portal API \(uri): \(problem)") }
                completion(check)
            }
        }
        guard let host = request.hostNeedingResolution else { return send(request, 0) }
        resolve(host, family: family, interface, context) { lookup in
            request.addresses = CaptivePortalCheck.addresses(from: lookup, family: family)
            guard !request.addresses.isEmpty else {
                let check = CaptivePortalCheck.unresolved(uri, host: host, lookupBytes: lookup.bytes)
                Log.info("\(interface): captive-portal API \(uri): \(check.problem ?? "")")
                return completion(check)
            }
            send(request, lookup.bytes)
        }
    }

    /// What every probe of one round shares.
    private struct RoundContext {
        var plan: RoundPlan
        var dns: DNSServers
    }

    private func probe(_ requests: [ProbeRequest], context: RoundContext,
                       completion: @escaping ([ProbeResult], [AddressFamily: KnownAnswerResult]) -> Void) {
        let knownFamilies = context.plan.knownAnswerFamilies(requests)
        let round = Round(count: requests.count + knownFamilies.count) { results in
            var knownAnswers: [AddressFamily: KnownAnswerResult] = [:]
            for case .knownAnswer(let family, let verdict) in results { knownAnswers[family] = verdict }
            let probes = results.compactMap { part -> ProbeResult? in
                if case .probe(let result) = part { return result } else { return nil }
            }
            completion(probes, knownAnswers)
        }
        guard round.remaining > 0 else {
            loop.schedule(afterMilliseconds: 0) { round.finishEmpty() }
            return
        }
        sendOrResolve(requests, round: round, context: context)
        for (offset, family) in knownFamilies.enumerated() {
            checkKnownAnswer(family, on: requests[0].interface, slot: requests.count + offset, round: round, context: context)
        }
    }

    /// IP literals and names this round may reuse go out at once; the others after
    /// their lookup, one lookup per name and family however many probes share it.
    private func sendOrResolve(_ requests: [ProbeRequest], round: Round, context: RoundContext) {
        let started = loop.nowMilliseconds
        var lookups: [DNSAnswerCache.Key: [(slot: Int, request: ProbeRequest)]] = [:]
        for (slot, request) in requests.enumerated() {
            guard let host = request.hostNeedingResolution, request.addresses.isEmpty else {
                send(request, slot: slot, round: round, context: context)
                continue
            }
            let key = DNSAnswerCache.Key(host: host, family: request.family)
            if lookups[key] == nil {
                lookups[key] = []
                // `self` is held until the answer: the round must complete even if
                // its owner lets go of the runner meanwhile.
                resolve(host, family: request.family, request.interface, context) { lookup in
                    let answer = NameAnswer(lookup, family: request.family, hijackCheck: context.plan.dns.hijackCheck)
                    self.log(answer, host: host, request: request)
                    let elapsed = self.loop.nowMilliseconds - started
                    for (index, waiter) in (lookups[key] ?? []).enumerated() {
                        // The lookup's bytes are counted once, on its first probe.
                        self.resolved(waiter.request, slot: waiter.slot, answer, lookupBytes: index == 0 ? lookup.bytes : 0,
                                      lookupMilliseconds: elapsed, round: round, context: context)
                    }
                }
            }
            lookups[key]?.append((slot, request))
        }
    }

    private func checkKnownAnswer(_ family: AddressFamily, on interface: InterfaceName, slot: Int, round: Round,
                                  context: RoundContext) {
        guard let known = context.plan.dns.knownAnswer else { return }
        resolve(known.name, family: family, interface, context) { lookup in
            let verdict = KnownAnswerResult.judge(lookup, expected: known)
            if case .mismatch(let addresses) = verdict {
                Log.warning("\(interface): DNS answers \(known.name) with \(addresses.map(\.description).joined(separator: ", ")), not \(known.addresses.map(\.description).joined(separator: ", ")): the resolver lies")
            }
            round.fill(slot, with: .knownAnswer(family, verdict))
        }
    }

    private func resolve(_ name: String, family: AddressFamily, _ interface: InterfaceName, _ context: RoundContext,
                         completion: @escaping (DNSLookup) -> Void) {
        resolver.resolve(name, family: family, on: interface, through: context.dns,
                         timeoutMilliseconds: context.plan.dnsTimeoutMilliseconds, completion: completion)
    }

    /// Logged once per lookup, however many probes share it.
    private func log(_ answer: NameAnswer, host: String, request: ProbeRequest) {
        let prefix = "\(request.interface) \(request.family.rawValue)"
        switch answer {
        case .failed(_, let failure?):
            Log.info("\(prefix): cannot resolve \(host): \(failure)")
        case .hijacked(let answers, let followable):
            let follow = followable.isEmpty
                ? "no HTTP sent (only loopback, unspecified or IPv4-mapped answers)" : "asking it for the login page"
            Log.info("\(prefix): \(host) resolves to \(answers.map(\.description).joined(separator: ", ")) through its DNS: hijacked; \(follow)")
        case .failed, .pinned:
            break
        }
    }

    private func resolved(_ request: ProbeRequest, slot: Int, _ answer: NameAnswer, lookupBytes: Int,
                          lookupMilliseconds: Int, round: Round, context: RoundContext) {
        switch answer.step(for: request, lookupBytes: lookupBytes, lookupMilliseconds: lookupMilliseconds) {
        case .decided(let result):
            round.fill(slot, with: .probe(result))
        case .send(let pinned, let validates):
            prober.send(pinned, settings: context.plan.probeSettings) { [validator] sent in
                let result = answer.completing(sent, lookupBytes: lookupBytes, lookupMilliseconds: lookupMilliseconds)
                guard validates else { return round.fill(slot, with: .probe(result)) }
                validator.validate(result, timeoutMilliseconds: context.plan.validatorTimeoutMilliseconds) { validated in
                    round.fill(slot, with: .probe(validated))
                }
            }
        }
    }

    private func send(_ request: ProbeRequest, slot: Int, round: Round, context: RoundContext) {
        prober.send(request, settings: context.plan.probeSettings) { [validator] result in
            validator.validate(result, timeoutMilliseconds: context.plan.validatorTimeoutMilliseconds) { validated in
                round.fill(slot, with: .probe(validated))
            }
        }
    }

    private enum Part {
        case probe(ProbeResult)
        case knownAnswer(AddressFamily, KnownAnswerResult)
    }

    /// Results of one round, in slot order, delivered once all have arrived.
    private final class Round {
        var slots: [Part?]
        var remaining: Int
        let completion: ([Part]) -> Void

        init(count: Int, completion: @escaping ([Part]) -> Void) {
            slots = Array(repeating: nil, count: count)
            remaining = count
            self.completion = completion
        }

        func fill(_ slot: Int, with part: Part) {
            guard slots[slot] == nil else { return }
            slots[slot] = part
            remaining -= 1
            if remaining == 0 { completion(slots.compactMap { $0 }) }
        }

        func finishEmpty() { completion([]) }
    }
}
