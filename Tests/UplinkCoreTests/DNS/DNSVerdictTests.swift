import Testing
import UplinkCore
import UplinkTestSupport

@Suite("DNS in verdicts")
struct DNSVerdictTests {
    let eth0: InterfaceName = "eth0"

    func result(_ family: AddressFamily, _ outcome: ProbeOutcome, url: String = "http://probe.example/gen") throws -> ProbeResult {
        ProbeResult(request: ProbeRequest(interface: eth0, family: family, probe: try probe(url)), outcome: outcome,
                    elapsedMilliseconds: 5, bytes: 100)
    }

    @Test func aHijackedNameIsCaptiveWithTheProbeURL() throws {
        let report = RoundJudge.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4]),
            results: [try result(.ipv4, .dnsHijack(addresses("10.0.0.1")))], thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment.verdict == .captive)
        #expect(report.assessment.reason == .dnsHijack)
        #expect(report.assessment.portalURL == "http://probe.example/gen")
    }

    @Test func noAnswerIsLimitedDNSFailed() throws {
        let report = RoundJudge.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4]),
            results: [try result(.ipv4, .failure(.dnsFailed))], thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment == Assessment(.limited, reason: .dnsFailed))
    }

    @Test func eachFamilyIsJudgedAndTheBestWins() throws {
        let report = RoundJudge.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4, .ipv6]),
            results: [try result(.ipv4, .response(ProbeResponse(status: 204))), try result(.ipv6, .failure(.timeout))],
            thresholdPercent: 50, elapsedMilliseconds: 9,
            dns: DNSServers(source: .dhclient, addresses: addresses("10.0.0.1")))
        #expect(report.assessment.verdict == .online)
        #expect(report.families[.ipv4]?.verdict == .online)
        #expect(report.families[.ipv6] == Assessment(.limited, reason: .timeout))
        let json = report.json.serialized()
        #expect(json.contains(#""dns":{"source":"dhclient","per_uplink":true,"servers":["10.0.0.1"]}"#))
        #expect(json.contains(#""ipv6":{"verdict":"limited","reason":"timeout""#))
    }

    @Test func anIPv6OnlyUplinkWithInternetIsOnline() throws {
        let report = RoundJudge.report(
            interface: eth0, kind: .wwan, link: .probe([.ipv6]),
            results: [try result(.ipv6, .response(ProbeResponse(status: 204)))], thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment.verdict == .online)
        #expect(report.families[.ipv4] == nil)
    }

    @Test func aLyingResolverVetoesItsFamily() throws {
        let report = RoundJudge.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4, .ipv6]),
            results: [try result(.ipv4, .response(ProbeResponse(status: 204))),
                      try result(.ipv6, .response(ProbeResponse(status: 204)))],
            thresholdPercent: 50, elapsedMilliseconds: 9,
            knownAnswers: [.ipv4: .mismatch(addresses("198.51.100.7")), .ipv6: .unanswered])
        #expect(report.families[.ipv4] == Assessment(.captive, reason: .dnsHijack))
        #expect(report.families[.ipv6]?.verdict == .online)
        #expect(report.assessment.verdict == .online)
    }

    @Test func namesNeedResolutionAndLiteralsDoNot() throws {
        #expect(ProbeRequest(interface: eth0, family: .ipv4, probe: try probe("http://probe.example/")).hostNeedingResolution == "probe.example")
        #expect(ProbeRequest(interface: eth0, family: .ipv4, probe: try probe("http://192.0.2.1/")).hostNeedingResolution == nil)
        #expect(ProbeRequest(interface: eth0, family: .ipv6, probe: try probe("http://[2001:db8::1]/")).hostNeedingResolution == nil)
    }
}
