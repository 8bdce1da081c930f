import Glibc
import UplinkCore

/// What a round needs to know about names: the uplink's servers and the rules.
public struct RoundDNS: Sendable {
    public var servers: DNSServers
    public var settings: DNSSettings

    public init(servers: DNSServers, settings: DNSSettings) {
        self.servers = servers
        self.settings = settings
    }
}

/// Everything one round learned.
public struct RoundResult: Sendable {
    /// One result per request, in request order.
    public var probes: [ProbeResult]
    public var knownAnswers: [AddressFamily: KnownAnswerResult]
}

/// Runs one probe round for one uplink on the event loop: resolves the probes' host
/// names through the uplink's own DNS (bound to it), judges the answers (a public
/// name answered with a private address is a hijack; no answer is a DNS failure),
/// sends every remaining probe over every family in parallel with its answer pinned,
/// then runs the external validators of the probes that have one (as child processes
/// of the loop), and hands the results to the core's planner.
public final class RoundRunner {
    private let loop: EventLoop
    private let prober: HTTPProber
    private let resolver: DNSResolver

    public init(loop: EventLoop, prober: HTTPProber, resolver: DNSResolver) {
        self.loop = loop
        self.prober = prober
        self.resolver = resolver
    }

    /// Starts a round; `completion` gets the results, always exactly once, on the
    /// loop. A probe libcurl refuses to start counts as a failed probe.
    public func run(_ requests: [ProbeRequest], dns: RoundDNS, settings: ProbeSettings,
                    validatorTimeoutMilliseconds: Int, completion: @escaping (RoundResult) -> Void) {
        let families = Set(requests.map(\.family))
        let knownFamilies = dns.settings.knownAnswer.map { families.intersection($0.families) } ?? []
        let round = Round(count: requests.count + knownFamilies.count) { results in
            var knownAnswers: [AddressFamily: KnownAnswerResult] = [:]
            for case .knownAnswer(let family, let verdict) in results { knownAnswers[family] = verdict }
            let probes = results.compactMap { part -> ProbeResult? in
                if case .probe(let result) = part { return result } else { return nil }
            }
            completion(RoundResult(probes: probes, knownAnswers: knownAnswers))
        }
        guard round.remaining > 0 else {
            loop.schedule(afterMilliseconds: 0) { round.finishEmpty() }
            return
        }
        let started = MonotonicClock.nowMilliseconds()
        var lookups: [String: [(slot: Int, request: ProbeRequest)]] = [:]
        for (slot, request) in requests.enumerated() {
            guard let host = request.hostNeedingResolution else {
                send(request, slot: slot, round: round, settings: settings, validatorTimeoutMilliseconds: validatorTimeoutMilliseconds)
                continue
            }
            // Several probes on one host share a lookup.
            let key = "\(request.family.rawValue) \(host)"
            if lookups[key] == nil {
                lookups[key] = []
                // `self` is held until the answer: the round must complete even if
                // its owner lets go of the runner meanwhile.
                resolve(host, family: request.family, request.interface, dns) { answer in
                    let judged = NameAnswer(answer, host: host, request: request, dns: dns)
                    let elapsed = MonotonicClock.nowMilliseconds() - started
                    for (index, waiter) in (lookups[key] ?? []).enumerated() {
                        // The lookup's bytes are counted once, on its first probe.
                        self.resolved(waiter.request, slot: waiter.slot, judged, bytes: index == 0 ? judged.bytes : 0,
                                      elapsedMilliseconds: elapsed, round: round, settings: settings,
                                      validatorTimeoutMilliseconds: validatorTimeoutMilliseconds)
                    }
                }
            }
            lookups[key]?.append((slot, request))
        }
        for (offset, family) in knownFamilies.sorted(by: { $0.rawValue < $1.rawValue }).enumerated() {
            let known = dns.settings.knownAnswer!
            let interface = requests[0].interface
            resolve(known.name, family: family, interface, dns) { answer in
                let verdict: KnownAnswerResult
                switch answer {
                case .success(let addresses):
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

    private func resolve(_ name: String, family: AddressFamily, _ interface: InterfaceName, _ dns: RoundDNS,
                         completion: @escaping (Result<[IPAddress], DNSFailure>) -> Void) {
        resolver.resolve(name, family: family, interface: dns.servers.bindsToInterface ? interface : nil,
                         servers: dns.servers.ordered(for: family),
                         timeoutMilliseconds: dns.settings.timeoutMilliseconds, completion: completion)
    }

    private func resolved(_ request: ProbeRequest, slot: Int, _ answer: NameAnswer, bytes: Int,
                          elapsedMilliseconds elapsed: Int, round: Round, settings: ProbeSettings,
                          validatorTimeoutMilliseconds: Int) {
        var pinned = request
        switch answer.verdict {
        case .failed(let reason):
            round.fill(slot, with: .probe(ProbeResult(request: request, outcome: .failure(reason),
                                                      elapsedMilliseconds: elapsed, bytes: bytes)))
        case .hijacked(let answers):
            pinned.addresses = answers
            round.fill(slot, with: .probe(ProbeResult(request: pinned, outcome: .dnsHijack(answers),
                                                      elapsedMilliseconds: elapsed, bytes: bytes)))
        case .pinned(let answers):
            pinned.addresses = answers
            send(pinned, slot: slot, round: round, settings: settings,
                 validatorTimeoutMilliseconds: validatorTimeoutMilliseconds, extraBytes: bytes, extraMilliseconds: elapsed)
        }
    }

    /// One lookup judged once (and logged once), however many probes share it.
    private struct NameAnswer {
        enum Verdict {
            case failed(TransportFailure)
            case hijacked([IPAddress])
            case pinned([IPAddress])
        }

        let verdict: Verdict
        let bytes: Int

        init(_ answer: Result<[IPAddress], DNSFailure>, host: String, request: ProbeRequest, dns: RoundDNS) {
            bytes = RoundRunner.estimatedDNSBytes(name: host, answer: answer)
            let prefix = "\(request.interface) \(request.family.rawValue)"
            switch answer {
            case .failure(let failure):
                Log.info("\(prefix): cannot resolve \(host): \(failure)")
                verdict = .failed(failure.kind == .bindFailed ? .bindFailed : .dnsFailed)
            case .success(let addresses):
                switch DNSEvidence.judge(addresses, family: request.family, hijackCheck: dns.settings.hijackCheck) {
                case .hijacked(let answers):
                    Log.info("\(prefix): \(host) resolves to \(answers.map(\.description).joined(separator: ", ")) through its DNS: hijacked")
                    verdict = .hijacked(answers)
                case .pin(let answers):
                    // Nothing left to pin (only IPv4-mapped AAAA answers, say): no usable answer.
                    verdict = answers.isEmpty ? .failed(.dnsFailed) : .pinned(answers)
                }
            }
        }
    }

    private func send(_ request: ProbeRequest, slot: Int, round: Round, settings: ProbeSettings,
                      validatorTimeoutMilliseconds: Int, extraBytes: Int = 0, extraMilliseconds: Int = 0) {
        do {
            try prober.start(request, settings: settings) { [loop] result in
                var result = result
                result.bytes += extraBytes
                result.elapsedMilliseconds += extraMilliseconds
                RoundRunner.validate(result, loop: loop, timeoutMilliseconds: validatorTimeoutMilliseconds) { validated in
                    round.fill(slot, with: .probe(validated))
                }
            }
        } catch {
            Log.error("cannot start probe \(request.probe.name) on \(request.interface): \(error)")
            let failed = ProbeResult(request: request, outcome: .failure(.other(code: error.code, message: error.message)),
                                     elapsedMilliseconds: extraMilliseconds, bytes: extraBytes)
            // Delivered from the loop, like every other result.
            loop.schedule(afterMilliseconds: 0) { round.fill(slot, with: .probe(failed)) }
        }
    }

    /// c-ares does not report packet sizes, so a lookup's cost is estimated from the
    /// DNS wire format: a query (12-byte header, the name, type and class) and an
    /// answer that repeats it and adds one record per address.
    static func estimatedDNSBytes(name: String, answer: Result<[IPAddress], DNSFailure>) -> Int {
        let question = 12 + name.utf8.count + 2 + 4
        guard case .success(let addresses) = answer else { return question }
        let records = addresses.reduce(0) { $0 + 12 + ($1.family == .ipv4 ? 4 : 16) }
        return question + question + records
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

    /// Runs the probe's external validator, if it has one and an answer came back:
    /// the body on stdin, the facts in the environment, no shell; exit 0 means valid.
    static func validate(_ result: ProbeResult, loop: EventLoop, timeoutMilliseconds: Int,
                         completion: @escaping (ProbeResult) -> Void) {
        guard let command = result.request.probe.expectation.validator,
              case .response(var response) = result.outcome else {
            completion(result)
            return
        }
        let request = result.request
        let started = MonotonicClock.nowMilliseconds()
        do {
            _ = try ChildProcess(
                loop: loop, name: "validator \(command.path)", arguments: [command.path] + command.arguments,
                environment: [
                    "UPLINK_HTTP_STATUS=\(response.status)",
                    "UPLINK_PROBE_URL=\(request.probe.url)",
                    "UPLINK_INTERFACE=\(request.interface.value)",
                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                ],
                input: response.body, timeoutMilliseconds: timeoutMilliseconds, killGraceMilliseconds: 1_000,
                onLine: { line in Log.info("validator \(command.path): \(line)") },
                completion: { termination in
                    response.validatorAccepted = termination.status == 0 && !termination.timedOut
                    if response.validatorAccepted != true {
                        Log.info("validator \(command.path) rejected the answer of \(request.probe.url) on \(request.interface) (exit \(termination.status))")
                    }
                    var validated = result
                    validated.outcome = .response(response)
                    validated.elapsedMilliseconds += MonotonicClock.nowMilliseconds() - started
                    completion(validated)
                })
        } catch {
            Log.warning("validator \(command.path) for \(request.probe.url): \(error)")
            response.validatorAccepted = false
            var validated = result
            validated.outcome = .response(response)
            completion(validated)
        }
    }
}
