import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Second look at a failed round")
struct SecondLookTests {
    static let names = ["apple", "google", "firefox", "microsoft", "debian"]

    /// How one probe of a round ends.
    enum End {
        case valid
        /// Timed out without a handshake.
        case silent
        /// Connected, then timed out.
        case stalled
        /// Connected, then reset.
        case reset
        case refused
        /// Connected and answered 200 "OK" where an empty 204 was expected.
        case garbage
        case redirect
    }

    private func result(_ name: String, _ end: End, family: AddressFamily = .ipv4) -> ProbeResult {
        let spec = ProbeSpec(name: name, url: try! ProbeURL(parsing: "http://\(name).example/check"),
                             expectation: Expectation(status: 204))
        let outcome: ProbeOutcome
        switch end {
        case .valid: outcome = response(204)
        case .silent, .stalled: outcome = .failure(.timeout)
        case .reset: outcome = .failure(.reset)
        case .refused: outcome = .failure(.refused)
        case .garbage: outcome = response(200, body: "OK")
        case .redirect: outcome = response(302, location: "http://portal.example/login")
        }
        var result = ProbeResult(request: ProbeRequest(interface: "eth0", family: family, probe: spec),
                                 outcome: outcome, elapsedMilliseconds: end == .silent || end == .stalled ? 5_000 : 30,
                                 bytes: 800)
        result.connected = ![.silent, .refused].contains(end)
        return result
    }

    /// A round over the five probes, ending as `ends` says, in probe order.
    private func round(_ ends: [End], families: [AddressFamily] = [.ipv4]) -> RoundReport {
        let results = families.flatMap { family in zip(SecondLookTests.names, ends).map { result($0, $1, family: family) } }
        return RoundJudge.report(interface: "eth0", kind: .ethernet, link: .probe(families), results: results,
                                   thresholdPercent: 50, elapsedMilliseconds: 5_100)
    }

    // MARK: showsLife

    @Test func aProbeValidatedBelowTheQuorumShowsLife() {
        let report = round([.valid, .silent, .silent, .silent, .silent])
        #expect(report.assessment.verdict == .limited)
        #expect(SecondLook.showsLife(report))
    }

    @Test func aHandshakeThatThenTimedOutShowsLife() {
        #expect(SecondLook.showsLife(round([.silent, .stalled, .silent, .silent, .silent])))
    }

    @Test func aHandshakeThatThenWasResetShowsLife() {
        #expect(SecondLook.showsLife(round([.silent, .silent, .reset, .silent, .silent])))
    }

    @Test func aHardCutShowsNoLife() {
        let report = round([.silent, .silent, .silent, .silent, .silent])
        #expect(report.assessment == Assessment(.limited, reason: .timeout))
        #expect(!SecondLook.showsLife(report))
    }

    @Test func refusalsShowNoLife() {
        #expect(!SecondLook.showsLife(round([.refused, .refused, .silent, .refused, .refused])))
    }

    @Test func aPortalIsConclusiveEvenWithAValidProbe() {
        let report = round([.valid, .redirect, .silent, .silent, .silent])
        #expect(report.assessment.verdict == .captive)
        #expect(!SecondLook.showsLife(report))
    }

    @Test func aProxysGarbageIsConclusiveThoughItConnected() {
        let report = round([.garbage, .garbage, .garbage, .garbage, .garbage])
        #expect(report.assessment == Assessment(.limited, reason: .badProxy))
        #expect(!SecondLook.showsLife(report))
    }

    @Test func anOnlineRoundNeedsNoSecondLook() {
        #expect(!SecondLook.showsLife(round([.valid, .valid, .valid, .silent, .silent])))
    }

    // MARK: merged

    @Test func probesValidatedInEitherLookCount() {
        let earlier = round([.valid, .valid, .silent, .silent, .silent])
        let later = round([.silent, .silent, .valid, .silent, .silent])
        #expect(earlier.assessment.verdict == .limited)
        #expect(later.assessment.verdict == .limited)
        let merged = SecondLook.merged(earlier, later, thresholdPercent: 50)
        #expect(merged.assessment == Assessment(.online, reason: .validated))
        #expect(merged.families[.ipv4]?.verdict == .online)
        #expect(merged.probes.map(\.name) == SecondLookTests.names)
        #expect(merged.probes.map { $0.judgement == .valid } == [true, true, true, false, false])
    }

    @Test func twoValidOfFiveInBothLooksStayBelowTheQuorum() {
        let earlier = round([.valid, .valid, .silent, .silent, .silent])
        let later = round([.valid, .valid, .silent, .silent, .silent])
        let merged = SecondLook.merged(earlier, later, thresholdPercent: 50)
        #expect(merged.assessment.verdict == .limited)
        #expect(SecondLook.showsLife(merged))
    }

    @Test func aPortalInTheLaterLookOutweighsEarlierSuccesses() {
        let earlier = round([.valid, .valid, .silent, .silent, .silent])
        let later = round([.silent, .silent, .valid, .redirect, .silent])
        #expect(later.assessment.verdict == .captive)
        let merged = SecondLook.merged(earlier, later, thresholdPercent: 50)
        #expect(merged.assessment.verdict == .captive)
        #expect(merged.assessment.portalURL == "http://portal.example/login")
    }

    @Test func looksAndEveryProbeSentAddUp() {
        let first = round([.valid, .silent, .silent, .silent, .silent])
        let second = round([.silent, .valid, .silent, .silent, .silent])
        let third = round([.silent, .silent, .silent, .silent, .valid])
        let twice = SecondLook.merged(first, second, thresholdPercent: 50)
        #expect(twice.looks == 2)
        #expect(twice.lookedProbes.count == 10)
        #expect(twice.elapsedMilliseconds == 10_200)
        let thrice = SecondLook.merged(twice, third, thresholdPercent: 50)
        #expect(thrice.looks == 3)
        #expect(thrice.lookedProbes.count == 15)
        #expect(thrice.probes.count == 5)
        #expect(thrice.assessment.verdict == .online)
    }

    @Test func aSuccessCountsOnlyInItsOwnFamily() {
        let earlier = round([.valid, .valid, .silent, .silent, .silent], families: [.ipv4])
        let later = round([.silent, .silent, .valid, .silent, .silent], families: [.ipv4, .ipv6])
        let merged = SecondLook.merged(earlier, later, thresholdPercent: 50)
        #expect(merged.families[.ipv4]?.verdict == .online)
        #expect(merged.families[.ipv6]?.verdict == .limited)
        #expect(merged.assessment.verdict == .online)
        #expect(merged.probes.filter { $0.family == .ipv6 && $0.judgement == .valid }.map(\.name) == ["firefox"])
    }
}
