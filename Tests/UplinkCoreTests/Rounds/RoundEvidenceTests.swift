import Testing
@testable import UplinkCore

/// What a round's lookups and the captive-portal API's answer mean, judged in the core
/// (the runner only sends, resolves and waits): a probe name's answer, the known
/// answer, the API's reply, and the plan's own inputs.
@Suite("Round evidence")
struct RoundEvidenceTests {
    let eth0: InterfaceName = "eth0"

    func lookup(_ texts: String..., ttlSeconds: Int = 60, bytes: Int = 90) -> DNSLookup {
        DNSLookup(result: .success(DNSAnswer(addresses: texts.map { IPAddress($0)! }, ttlSeconds: ttlSeconds)), bytes: bytes)
    }

    func failedLookup(_ kind: DNSFailure.Kind) -> DNSLookup {
        DNSLookup(result: .failure(DNSFailure(kind: kind, code: 12, message: "Timeout while contacting DNS servers")), bytes: 120)
    }

    func request(_ family: AddressFamily = .ipv4) throws -> ProbeRequest {
        ProbeRequest(interface: eth0, family: family, probe: try probe("http://probe.example/generate_204"))
    }

    // MARK: a probe name's answer

    @Test func aPublicAnswerIsPinnedAndValidated() throws {
        let answer = NameAnswer(lookup("192.0.2.10", ttlSeconds: 30), family: .ipv4, hijackCheck: true)
        #expect(answer == .pinned(addresses("192.0.2.10"), ttlSeconds: 30))
        var pinned = try request()
        pinned.addresses = addresses("192.0.2.10")
        #expect(answer.step(for: try request(), lookupBytes: 90, lookupMilliseconds: 7) == .send(pinned, validates: true))
        let sent = ProbeResult(request: pinned, outcome: response(204), elapsedMilliseconds: 5, bytes: 300)
        let done = answer.completing(sent, lookupBytes: 90, lookupMilliseconds: 7)
        #expect(done.bytes == 390 && done.elapsedMilliseconds == 12)
        #expect(done.dnsMilliseconds == 7 && done.dnsTTLSeconds == 30)
        #expect(done.outcome == response(204))
    }

    @Test func aFailedLookupDecidesTheProbe() throws {
        let answer = NameAnswer(failedLookup(.timeout), family: .ipv4, hijackCheck: true)
        guard case .failed(.dnsFailed, let failure?) = answer else {
            Issue.record("not a DNS failure: \(answer)")
            return
        }
        #expect(failure.kind == .timeout)
        let step = answer.step(for: try request(), lookupBytes: 120, lookupMilliseconds: 2_000)
        #expect(step == .decided(ProbeResult(request: try request(), outcome: .failure(.dnsFailed),
                                             elapsedMilliseconds: 2_000, bytes: 120, dnsMilliseconds: 2_000)))
    }

    @Test func aQuerySocketThatCannotBindIsABindFailure() {
        #expect(NameAnswer(failedLookup(.bindFailed), family: .ipv4, hijackCheck: true)
                == .failed(.bindFailed, DNSFailure(kind: .bindFailed, code: 12, message: "Timeout while contacting DNS servers")))
    }

    @Test func anAnswerWithNothingOfTheFamilyIsADNSFailure() {
        // IPv4-mapped AAAA answers are never pinned: nothing is left to probe.
        #expect(NameAnswer(lookup("::ffff:192.0.2.1"), family: .ipv6, hijackCheck: true) == .failed(.dnsFailed, nil))
    }

    @Test func aPrivateAnswerIsAHijackFollowedWithoutValidator() throws {
        let answer = NameAnswer(lookup("10.0.0.1"), family: .ipv4, hijackCheck: true)
        #expect(answer == .hijacked(addresses("10.0.0.1"), followable: addresses("10.0.0.1")))
        var followed = try request()
        followed.addresses = addresses("10.0.0.1")
        #expect(answer.step(for: try request(), lookupBytes: 90, lookupMilliseconds: 3) == .send(followed, validates: false))
        let sent = ProbeResult(request: followed, outcome: response(302, location: "http://10.0.0.1/login"),
                               elapsedMilliseconds: 4, bytes: 400)
        let done = answer.completing(sent, lookupBytes: 90, lookupMilliseconds: 3)
        #expect(done.outcome == .hijacked(addresses("10.0.0.1"), followedBy: response(302, location: "http://10.0.0.1/login")))
        #expect(done.bytes == 490 && done.elapsedMilliseconds == 7 && done.dnsTTLSeconds == nil)
    }

    @Test func aLoopbackHijackSendsNothing() throws {
        let answer = NameAnswer(lookup("127.0.0.1"), family: .ipv4, hijackCheck: true)
        #expect(answer == .hijacked(addresses("127.0.0.1"), followable: []))
        var pinned = try request()
        pinned.addresses = addresses("127.0.0.1")
        #expect(answer.step(for: try request(), lookupBytes: 90, lookupMilliseconds: 3)
                == .decided(ProbeResult(request: pinned, outcome: .dnsHijack(addresses("127.0.0.1")),
                                        elapsedMilliseconds: 3, bytes: 90, dnsMilliseconds: 3)))
    }

    @Test func withoutTheHijackCheckAPrivateAnswerIsPinned() {
        #expect(NameAnswer(lookup("10.0.0.1"), family: .ipv4, hijackCheck: false) == .pinned(addresses("10.0.0.1"), ttlSeconds: 60))
    }

    // MARK: the known answer

    @Test func theKnownAnswerMatchesLiesOrSaysNothing() {
        let known = KnownAnswer(name: "known.example", addresses: addresses("192.0.2.53"))
        #expect(KnownAnswerResult.judge(lookup("192.0.2.53", "192.0.2.54"), expected: known) == .matched)
        #expect(KnownAnswerResult.judge(lookup("10.9.9.9"), expected: known) == .mismatch(addresses("10.9.9.9")))
        #expect(KnownAnswerResult.judge(failedLookup(.notFound), expected: known) == .unanswered)
    }

    // MARK: the captive-portal API's answer

    let api = try! ProbeURL(parsing: "https://portal.example/api")

    func apiResult(_ outcome: ProbeOutcome, bytes: Int = 700) -> ProbeResult {
        ProbeResult(request: CaptivePortalCheck.request(api, interface: eth0, family: .ipv4), outcome: outcome,
                    elapsedMilliseconds: 9, bytes: bytes)
    }

    @Test func theAPIRequestAsksForItsMediaTypeUnderItsOwnBodyCap() {
        let request = CaptivePortalCheck.request(api, interface: eth0, family: .ipv6)
        #expect(request.probe.accept == CaptivePortalAPI.mediaType && request.family == .ipv6)
        var round = ProbeSettings(configuration: Configuration(), timeoutMilliseconds: 900)
        round.bodyLimitBytes = 4_096
        let settings = CaptivePortalCheck.settings(round)
        #expect(settings.bodyLimitBytes == CaptivePortalAPI.bodyLimitBytes && settings.timeoutMilliseconds == 900)
    }

    @Test func aWholeAnswerGivesTheStatusAndCountsTheLookup() {
        let body = #"{"captive": true, "user-portal-url": "https://portal.example/login"}"#
        let check = CaptivePortalCheck(uri: api, answer: apiResult(response(200, body: body)), lookupBytes: 80)
        #expect(check.status?.captive == true && check.status?.userPortalURL == "https://portal.example/login")
        #expect(check.problem == nil && check.bytes == 780)
    }

    @Test func everyUnusableAnswerNamesItsProblem() {
        func problem(_ outcome: ProbeOutcome) -> String? {
            let check = CaptivePortalCheck(uri: api, answer: apiResult(outcome), lookupBytes: 0)
            #expect(check.status == nil)
            return check.problem
        }
        #expect(problem(.failure(.tls)) == "no answer (tls)")
        #expect(problem(.handshake) == "no answer (no HTTP)")
        #expect(problem(response(404)) == "HTTP status 404")
        #expect(problem(.response(ProbeResponse(status: 200, body: Array("{".utf8), bodyTruncated: true)))
                == "answer over \(CaptivePortalAPI.bodyLimitBytes) bytes")
        #expect(problem(response(200, body: #"{"captive": "yes"}"#)) == "the captive-portal API answer has no boolean \"captive\"")
    }

    @Test func anUnresolvedAPINameCostsItsLookup() {
        #expect(CaptivePortalCheck.addresses(from: failedLookup(.timeout), family: .ipv4).isEmpty)
        // Private answers are normal: the API lives inside the captive network.
        #expect(CaptivePortalCheck.addresses(from: lookup("10.0.0.5"), family: .ipv4) == addresses("10.0.0.5"))
        #expect(CaptivePortalCheck.addresses(from: lookup("127.0.0.1"), family: .ipv4).isEmpty)
        let check = CaptivePortalCheck.unresolved(api, host: "portal.example", lookupBytes: 120)
        #expect(check.problem == "cannot resolve portal.example" && check.bytes == 120 && check.status == nil)
    }

    // MARK: the plan's own inputs

    func plan(_ purpose: RoundPurpose, _ configure: (inout Configuration) -> Void = { _ in }) throws -> RoundPlan {
        var configuration = Configuration()
        configure(&configuration)
        return RoundPlan(interface: eth0, index: 2, kind: .ethernet, link: .probe([.ipv4, .ipv6]), purpose: purpose,
                         probes: [try probe("http://probe.example/generate_204"), try probe("http://192.0.2.7/ok")],
                         thresholdPercent: 50, timeoutMilliseconds: 800, dnsTimeoutMilliseconds: 600,
                         cachedAnswers: [DNSAnswerCache.Key(host: "probe.example", family: .ipv6): addresses("2001:db8::7")],
                         configuration: configuration)
    }

    @Test func requestsSkipLiteralsOfTheOtherFamilyAndReuseCachedAnswers() throws {
        let requests = try plan(.light).requests
        #expect(requests.map(\.family) == [.ipv4, .ipv4, .ipv6])
        #expect(requests[0].addresses.isEmpty, "no cached IPv4 answer: resolved by the round")
        #expect(requests[2].addresses == addresses("2001:db8::7"))
    }

    @Test func aLivenessRoundSendsBareHandshakesWithinItsLimit() throws {
        #expect(try plan(.liveness).probeSettings.handshakeOnly)
        #expect(try plan(.liveness).probeSettings.timeoutMilliseconds == 800)
        #expect(try !plan(.full).probeSettings.handshakeOnly)
    }

    @Test func onlyFullRoundsAskTheAPIAndTheKnownAnswer() throws {
        let known = KnownAnswer(name: "known.example", addresses: addresses("192.0.2.53"))
        let full = try plan(.full) { $0.dns.knownAnswer = known }
        #expect(full.asksCaptivePortalAPI)
        #expect(full.knownAnswerFamilies(full.requests) == [.ipv4], "only the families of the expected addresses")
        let light = try plan(.light) { $0.dns.knownAnswer = known }
        #expect(!light.asksCaptivePortalAPI && light.knownAnswerFamilies(light.requests).isEmpty)
        #expect(try !plan(.full) { $0.useCaptivePortalAPI = false }.asksCaptivePortalAPI)
    }

    @Test func theInterfaceOwnServersComeWithThePlan() throws {
        let plan = try plan(.full) { $0.interfaces[eth0] = InterfaceSettings(dnsServers: addresses("192.0.2.1")) }
        #expect(plan.configuredDNSServers == addresses("192.0.2.1"))
        #expect(try self.plan(.full).configuredDNSServers == nil)
    }
}
