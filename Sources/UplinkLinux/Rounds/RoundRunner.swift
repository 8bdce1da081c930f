import UplinkCore

/// Runs probe rounds on the event loop, for `check` and for the agent alike: finds the
/// uplink's DNS servers, resolves the probes' host names through them (bound to the
/// uplink), judges the answers (a public name answered with a private address is a
/// hijack, yet the probe is still sent to the private address it gave, to hear the
/// portal name its login page; no answer is a DNS failure), sends every remaining probe
/// over every family in parallel with its answer pinned, runs the external validators,
/// and lets the core's planner turn the results into the report.
public final class RoundRunner {
    private let loop: EventLoop
    private let prober: ProbeSending
    private let resolver: NameResolving
    private let files: NetworkFileReading
    private let validator: AnswerValidating

    public init(loop: EventLoop, prober: ProbeSending, resolver: NameResolving, files: NetworkFileReading,
                validator: AnswerValidating) {
        self.loop = loop
        self.prober = prober
        self.resolver = resolver
        self.files = files
        self.validator = validator
    }

    /// Runs the round `plan` describes (its probes, time limits and reusable DNS
    /// answers) with `configuration`'s rules. `completion` gets the report exactly
    /// once, on the loop; its elapsed time counts from `startedMilliseconds` (default:
    /// now).
    public func run(_ plan: RoundPlan, configuration: Configuration, startedMilliseconds: Int? = nil,
                    completion: @escaping (CheckReport) -> Void) {
        let started = startedMilliseconds ?? loop.nowMilliseconds
        var servers: DNSServers?
        if case .probe = plan.link {
            // Looked up again every round: a DHCP renewal may have changed them.
            servers = files.dnsServers(for: plan.interface, index: plan.index,
                                       configured: configuration.interfaces[plan.interface]?.dnsServers,
                                       settings: configuration.dns)
        }
        var requests = CheckPlanner.requests(for: plan.interface, link: plan.link, probes: plan.probes(for:))
        for index in requests.indices {
            guard let host = requests[index].hostNeedingResolution,
                  let cached = plan.cachedAnswers[DNSAnswerCache.Key(host: host, family: requests[index].family)] else { continue }
            requests[index].addresses = cached
        }
        let context = RoundContext(dns: servers ?? .none, dnsSettings: configuration.dns,
                                   dnsTimeoutMilliseconds: plan.dnsTimeoutMilliseconds,
                                   checkKnownAnswer: plan.purpose == .full,
                                   settings: plan.probeSettings(configuration),
                                   validatorTimeoutMilliseconds: configuration.validatorTimeoutMilliseconds)
        // The network's captive-portal API, asked in full rounds beside the probes.
        var api: (uri: ProbeURL, family: AddressFamily)?
        if plan.purpose == .full, configuration.useCaptivePortalAPI, case .probe(let families) = plan.link,
           let family = families.first,
           let uri = files.captivePortalAPI(for: plan.interface, index: plan.index, settings: configuration.dns) {
            api = (uri, family)
        }
        var probes: [ProbeResult] = [], knownAnswers: [AddressFamily: KnownAnswerResult] = [:]
        var captivePortal: CaptivePortalCheck?
        var remaining = api == nil ? 1 : 2
        let finish = { [loop] in
            remaining -= 1
            guard remaining == 0 else { return }
            var report = CheckPlanner.report(
                interface: plan.interface, kind: plan.kind, link: plan.link, results: probes,
                thresholdPercent: plan.thresholdPercent,
                elapsedMilliseconds: loop.nowMilliseconds - started, dns: servers, knownAnswers: knownAnswers,
                captivePortal: captivePortal)
            report.purpose = plan.purpose
            completion(report)
        }
        probe(requests, context: context) { results, answers in
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
    /// uplink's DNS (a private answer is normal here: the API lives inside the captive
    /// network), HTTPS bound to the uplink with the certificate checked, the body
    /// capped. `completion` runs once, on the loop.
    private func askCaptivePortalAPI(_ uri: ProbeURL, interface: InterfaceName, family: AddressFamily,
                                     context: RoundContext, completion: @escaping (CaptivePortalCheck) -> Void) {
        var spec = ProbeSpec(name: "captive-portal-api", url: uri, expectation: Expectation(status: 200))
        spec.accept = CaptivePortalAPI.mediaType
        var request = ProbeRequest(interface: interface, family: family, probe: spec)
        var settings = context.settings
        settings.bodyLimitBytes = CaptivePortalAPI.bodyLimitBytes
        let send = { [prober] (request: ProbeRequest, lookupBytes: Int) in
            prober.send(request, settings: settings) { result in
                let bytes = result.bytes + lookupBytes
                guard case .response(let response) = result.outcome else {
                    let why = if case .failure(let failure) = result.outcome { failure.reason.rawValue } else { "no HTTP" }
                    Log.info("\(interface): captive-portal API \(uri): no answer (\(why))")
                    return completion(CaptivePortalCheck(uri: uri, status: nil, problem: "no answer (\(why))", bytes: bytes))
                }
                guard response.status == 200, !response.bodyTruncated else {
                    let problem = response.bodyTruncated ? "answer over \(CaptivePortalAPI.bodyLimitBytes) bytes" : "HTTP status \(response.status)"
                    Log.info("\(interface): captive-portal API \(uri): \(problem)")
                    return completion(CaptivePortalCheck(uri: uri, status: nil, problem: problem, bytes: bytes))
                }
                do throws(CaptivePortalAPI.Invalid) {
                    let check = CaptivePortalCheck(uri: uri, status: try CaptivePortalAPI.status(from: response.body), bytes: bytes)
                    if let problem = check.problem { Log.info("\(interface): captive-portal API \(uri): \(problem)") }
                    completion(check)
                } catch {
                    Log.info("\(interface): \(error)")
                    completion(CaptivePortalCheck(uri: uri, status: nil, problem: error.message, bytes: bytes))
                }
            }
        }
        guard let host = request.hostNeedingResolution else { return send(request, 0) }
        resolve(host, family: family, interface, context) { lookup in
            guard case .success(let answer) = lookup.result,
                  case let addresses = DNSEvidence.followable(answer.addresses, family: family), !addresses.isEmpty else {
                Log.info("\(interface): captive-portal API \(uri): cannot resolve \(host)")
                return completion(CaptivePortalCheck(uri: uri, status: nil, problem: "cannot resolve \(host)", bytes: lookup.bytes))
            }
            request.addresses = addresses
            send(request, lookup.bytes)
        }
    }

    /// What every probe of one round shares.
    private struct RoundContext {
        var dns: DNSServers
        var dnsSettings: DNSSettings
        var dnsTimeoutMilliseconds: Int
        var checkKnownAnswer: Bool
        var settings: ProbeSettings
        var validatorTimeoutMilliseconds: Int
    }

    private func probe(_ requests: [ProbeRequest], context: RoundContext,
                       completion: @escaping ([ProbeResult], [AddressFamily: KnownAnswerResult]) -> Void) {
        let families = Set(requests.map(\.family))
        // The known-answer check is hijack evidence, a full round's business: light and
        // verification rounds stay one HTTP exchange.
        let knownFamilies = context.checkKnownAnswer
            ? context.dnsSettings.knownAnswer.map { families.intersection($0.families) } ?? [] : []
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
        let started = loop.nowMilliseconds
        var lookups: [DNSAnswerCache.Key: [(slot: Int, request: ProbeRequest)]] = [:]
        for (slot, request) in requests.enumerated() {
            // IP literals, and names whose answer this round may reuse, go out at once.
            guard let host = request.hostNeedingResolution, request.addresses.isEmpty else {
                send(request, slot: slot, round: round, context: context)
                continue
            }
            // Several probes on one host share a lookup.
            let key = DNSAnswerCache.Key(host: host, family: request.family)
            if lookups[key] == nil {
                lookups[key] = []
                // `self` is held until the answer: the round must complete even if
                // its owner lets go of the runner meanwhile.
                resolve(host, family: request.family, request.interface, context) { answer in
                    let judged = NameAnswer(answer, host: host, request: request, hijackCheck: context.dnsSettings.hijackCheck)
                    let elapsed = self.loop.nowMilliseconds - started
                    for (index, waiter) in (lookups[key] ?? []).enumerated() {
                        // The lookup's bytes are counted once, on its first probe.
                        self.resolved(waiter.request, slot: waiter.slot, judged, bytes: index == 0 ? answer.bytes : 0,
                                      elapsedMilliseconds: elapsed, round: round, context: context)
                    }
                }
            }
            lookups[key]?.append((slot, request))
        }
        for (offset, family) in knownFamilies.sorted(by: { $0.rawValue < $1.rawValue }).enumerated() {
            let known = context.dnsSettings.knownAnswer!
            let interface = requests[0].interface
            resolve(known.name, family: family, interface, context) { lookup in
                let verdict: KnownAnswerResult
                switch lookup.result {
                case .success(let answer):
                    let addresses = answer.addresses
                    verdict = KnownAnswerResult.judge(addresses, expected: known)
                    if case .mismatch = verdict {
                        Log.warning("\(interface): DNS answers \(known.name) with \(addresses.map(\.description).joined(separator: ", ")), not \(known.addresses.map(\.description).joined(separator: ", ")): the resolver lies")
                    }
                case .failure:
                    verdict = .unanswered
                }
                round.fill(requests.count + offset, with: .knownAnswer(family, verdict))
            }
        }
    }

    private func resolve(_ name: String, family: AddressFamily, _ interface: InterfaceName, _ context: RoundContext,
                         completion: @escaping (DNSLookup) -> Void) {
        resolver.resolve(name, family: family, on: interface, through: context.dns,
                         timeoutMilliseconds: context.dnsTimeoutMilliseconds, completion: completion)
    }

    private func resolved(_ request: ProbeRequest, slot: Int, _ answer: NameAnswer, bytes: Int,
                          elapsedMilliseconds elapsed: Int, round: Round, context: RoundContext) {
        var pinned = request
        switch answer.verdict {
        case .failed(let reason):
            round.fill(slot, with: .probe(ProbeResult(request: request, outcome: .failure(reason),
                                                      elapsedMilliseconds: elapsed, bytes: bytes, dnsMilliseconds: elapsed)))
        case .hijacked(let answers):
            let followable = DNSEvidence.followable(answers, family: request.family)
            guard !followable.isEmpty else {
                pinned.addresses = answers
                round.fill(slot, with: .probe(ProbeResult(request: pinned, outcome: .dnsHijack(answers),
                                                          elapsedMilliseconds: elapsed, bytes: bytes, dnsMilliseconds: elapsed)))
                return
            }
            // Sent like any pinned probe, so the portal's answer can name its login
            // page; no validator: the DNS answer already decided the verdict.
            pinned.addresses = followable
            prober.send(pinned, settings: context.settings) { result in
                var result = result
                result.outcome = .hijacked(answers, followedBy: result.outcome)
                result.bytes += bytes
                result.elapsedMilliseconds += elapsed
                result.dnsMilliseconds = elapsed
                round.fill(slot, with: .probe(result))
            }
        case .pinned(let answers, let ttlSeconds):
            pinned.addresses = answers
            send(pinned, slot: slot, round: round, context: context, extraBytes: bytes,
                 lookup: (milliseconds: elapsed, ttlSeconds: ttlSeconds))
        }
    }

    /// One lookup judged once (and logged once), however many probes share it.
    private struct NameAnswer {
        enum Verdict {
            case failed(TransportFailure)
            case hijacked([IPAddress])
            case pinned([IPAddress], ttlSeconds: Int)
        }

        let verdict: Verdict

        init(_ lookup: DNSLookup, host: String, request: ProbeRequest, hijackCheck: Bool) {
            let prefix = "\(request.interface) \(request.family.rawValue)"
            switch lookup.result {
            case .failure(let failure):
                Log.info("\(prefix): cannot resolve \(host): \(failure)")
                verdict = .failed(failure.kind == .bindFailed ? .bindFailed : .dnsFailed)
            case .success(let answer):
                let addresses = answer.addresses
                switch DNSEvidence.judge(addresses, family: request.family, hijackCheck: hijackCheck) {
                case .hijacked(let answers):
                    let follow = DNSEvidence.followable(answers, family: request.family).isEmpty
                        ? "no HTTP sent (only loopback, unspecified or IPv4-mapped answers)" : "asking it for the login page"
                    Log.info("\(prefix): \(host) resolves to \(answers.map(\.description).joined(separator: ", ")) through its DNS: hijacked; \(follow)")
                    verdict = .hijacked(answers)
                case .pin(let answers):
                    // Nothing left to pin (only IPv4-mapped AAAA answers, say): no usable answer.
                    verdict = answers.isEmpty ? .failed(.dnsFailed) : .pinned(answers, ttlSeconds: answer.ttlSeconds)
                }
            }
        }
    }

    private func send(_ request: ProbeRequest, slot: Int, round: Round, context: RoundContext,
                      extraBytes: Int = 0, lookup: (milliseconds: Int, ttlSeconds: Int)? = nil) {
        prober.send(request, settings: context.settings) { [validator] result in
            var result = result
            result.bytes += extraBytes
            if let lookup {
                result.elapsedMilliseconds += lookup.milliseconds
                result.dnsMilliseconds = lookup.milliseconds
                result.dnsTTLSeconds = lookup.ttlSeconds
            }
            validator.validate(result, timeoutMilliseconds: context.validatorTimeoutMilliseconds) { validated in
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

extension RoundPlan {
    /// How this round's probes are sent: its time limit, and a liveness round's bare
    /// handshakes.
    func probeSettings(_ configuration: Configuration) -> ProbeSettings {
        var settings = ProbeSettings(configuration: configuration, timeoutMilliseconds: timeoutMilliseconds)
        settings.handshakeOnly = purpose == .liveness
        return settings
    }
}
