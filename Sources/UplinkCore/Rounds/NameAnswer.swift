/// One lookup of a probe's host name through the uplink, judged once however many
/// probes of the round share it: no usable answer (a DNS failure), a hijack (a public
/// name answered only with addresses that are never the internet), or addresses to
/// pin the probes to.
package enum NameAnswer: Sendable, Equatable {
    /// No usable answer: the probes fail with `reason`; `failure` says what the
    /// resolver said (nil: it answered, with nothing this family can use).
    case failed(TransportFailure, DNSFailure?)
    /// Hijacked. `followable` is where the probe may still go to hear the portal name
    /// its login page (`DNSEvidence.followable`); empty: no HTTP is sent.
    case hijacked([IPAddress], followable: [IPAddress])
    case pinned([IPAddress], ttlSeconds: Int)

    /// `family` is the record family asked for; `hijackCheck` is `[dns] hijack-check`.
    package init(_ lookup: DNSLookup, family: AddressFamily, hijackCheck: Bool) {
        switch lookup.result {
        case .failure(let failure):
            self = .failed(failure.kind == .bindFailed ? .bindFailed : .dnsFailed, failure)
        case .success(let answer):
            switch DNSEvidence.judge(answer.addresses, family: family, hijackCheck: hijackCheck) {
            case .hijacked(let answers):
                self = .hijacked(answers, followable: DNSEvidence.followable(answers, family: family))
            case .pin(let answers):
                // Nothing left to pin (only IPv4-mapped AAAA answers, say): no usable answer.
                self = answers.isEmpty ? .failed(.dnsFailed, nil) : .pinned(answers, ttlSeconds: answer.ttlSeconds)
            }
        }
    }

    /// What becomes of one probe after its name's answer.
    package enum Step: Sendable, Equatable {
        /// The answer alone decides the probe: a DNS failure, or a hijack with
        /// nowhere to follow.
        case decided(ProbeResult)
        /// Send this request, pinned to the answer. `validates`: run the probe's
        /// external validator (not for a followed hijack: the DNS answer already
        /// decided the verdict, the probe only hears the portal's login page).
        case send(ProbeRequest, validates: Bool)
    }

    /// The step for `request`. `lookupBytes` and `lookupMilliseconds` are the lookup's
    /// cost and time.
    package func step(for request: ProbeRequest, lookupBytes: Int, lookupMilliseconds: Int) -> Step {
        var pinned = request
        switch self {
        case .failed(let reason, _):
            return .decided(ProbeResult(request: request, outcome: .failure(reason), elapsedMilliseconds: lookupMilliseconds,
                                        bytes: lookupBytes, dnsMilliseconds: lookupMilliseconds))
        case .hijacked(let answers, let followable) where followable.isEmpty:
            pinned.addresses = answers
            return .decided(ProbeResult(request: pinned, outcome: .dnsHijack(answers), elapsedMilliseconds: lookupMilliseconds,
                                        bytes: lookupBytes, dnsMilliseconds: lookupMilliseconds))
        case .hijacked(_, let followable):
            pinned.addresses = followable
            return .send(pinned, validates: false)
        case .pinned(let answers, _):
            pinned.addresses = answers
            return .send(pinned, validates: true)
        }
    }

    /// What the probe sent to a followed hijack heard becomes evidence of the hijack
    /// (whatever it answers, the reason stays `dns-hijack`); a pinned probe's result
    /// takes in the lookup's time, TTL and bytes.
    package func completing(_ sent: ProbeResult, lookupBytes: Int, lookupMilliseconds: Int) -> ProbeResult {
        var result = sent
        result.bytes += lookupBytes
        result.elapsedMilliseconds += lookupMilliseconds
        result.dnsMilliseconds = lookupMilliseconds
        switch self {
        case .hijacked(let answers, _):
            result.outcome = .hijacked(answers, followedBy: sent.outcome)
        case .pinned(_, let ttlSeconds):
            result.dnsTTLSeconds = ttlSeconds
        case .failed:
            break
        }
        return result
    }
}
