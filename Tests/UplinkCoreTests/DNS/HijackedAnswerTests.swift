import Testing
import UplinkCore
import UplinkTestSupport

/// A probe name hijacked by the uplink's DNS is still asked over HTTP at the private
/// address it was given: the verdict stays `captive (dns-hijack)`, and the portal's
/// answer only says where its login page is.
@Suite("Following a hijacked DNS answer")
struct HijackedAnswerTests {
    let eth0: InterfaceName = "eth0"
    let probeURL = "http://probe.example/generate_204"
    let hijacked = addresses("10.0.0.1")

    func hijack(_ exchange: ProbeOutcome) -> ProbeOutcome {
        .hijacked(hijacked, followedBy: exchange)
    }

    func classify(_ exchange: ProbeOutcome, _ expectation: Expectation = Expectation(status: 204),
                  url: String? = nil) throws -> ProbeClass {
        Classifier.classify(hijack(exchange), for: try probe(url ?? probeURL, expectation))
    }

    @Test func aRedirectGivesItsLocation() throws {
        #expect(try classify(response(302, location: "http://10.0.0.1/login?orig=1"))
                == .portal(reason: .dnsHijack, portalURL: "http://10.0.0.1/login?orig=1"))
        // Relative, resolved against the probe URL as for any redirect.
        #expect(try classify(response(303, location: "/portal/start"))
                == .portal(reason: .dnsHijack, portalURL: "http://probe.example/portal/start"))
    }

    @Test func aLoginPageWithAMetaRefreshGivesItsURL() throws {
        let page = #"<html><head><meta http-equiv="refresh" content="0; url=http://portal.lan/welcome"></head></html>"#
        #expect(try classify(response(200, body: page))
                == .portal(reason: .dnsHijack, portalURL: "http://portal.lan/welcome"))
    }

    @Test func aWISPrBlockGivesItsLoginURL() throws {
        let page = """
            <html><body><!--<?xml version="1.0"?><WISPAccessGatewayParam><Redirect>
            <LoginURL>https://portal.lan/wispr/login?res=1&amp;x=2</LoginURL></Redirect></WISPAccessGatewayParam>-->
            <meta http-equiv="refresh" content="0; url=http://portal.lan/other"></body></html>
            """
        #expect(try classify(response(200, body: page))
                == .portal(reason: .dnsHijack, portalURL: "https://portal.lan/wispr/login?res=1&x=2"))
        // 511 pages carry the same hints.
        #expect(try classify(response(511, body: page))
                == .portal(reason: .dnsHijack, portalURL: "https://portal.lan/wispr/login?res=1&x=2"))
    }

    @Test func anAnswerWithoutAHintKeepsTheProbeURL() throws {
        let probeURLClass = ProbeClass.portal(reason: .dnsHijack, portalURL: probeURL)
        // The expected answer from a private address is still a hijack: the DNS
        // answer came first, and a portal may pass the probe's own path through.
        #expect(try classify(response(204)) == probeURLClass)
        #expect(try classify(response(200, body: "success\n"), Expectation(status: 200, bodyContains: "success"))
                == probeURLClass)
        #expect(try classify(response(200, body: loginPage)) == probeURLClass)
        #expect(try classify(response(302)) == probeURLClass, "a redirect without Location names nothing")
        #expect(try classify(response(502, body: "Bad Gateway")) == probeURLClass)
        #expect(try classify(response(404)) == probeURLClass)
    }

    @Test func aFailedExchangeKeepsTheDNSEvidenceAndTheProbeURL() throws {
        for failure in [TransportFailure.timeout, .refused, .reset, .unreachable, .tls, .bindFailed] {
            #expect(hijack(.failure(failure)) == .dnsHijack(hijacked), "\(failure)")
            #expect(try classify(.failure(failure)) == .portal(reason: .dnsHijack, portalURL: probeURL), "\(failure)")
        }
        // Nothing sent at all (only loopback answers): today's verdict.
        #expect(Classifier.classify(.dnsHijack(addresses("127.0.0.1")), for: try probe(probeURL))
                == .portal(reason: .dnsHijack, portalURL: probeURL))
    }

    @Test func theReportShowsThePortalURLTheStatusAndThePinnedAddress() throws {
        var request = ProbeRequest(interface: eth0, family: .ipv4, probe: try probe(probeURL))
        request.addresses = hijacked
        let results = [ProbeResult(request: request, outcome: hijack(response(302, location: "http://10.0.0.1/login")),
                                   elapsedMilliseconds: 7, bytes: 900, dnsMilliseconds: 2)]
        let report = RoundJudge.report(interface: eth0, kind: .wifi, link: .probe([.ipv4]), results: results,
                                         thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment == Assessment(.captive, reason: .dnsHijack, portalURL: "http://10.0.0.1/login"))
        #expect(report.families[.ipv4]?.portalURL == "http://10.0.0.1/login")
        #expect(report.probes.first?.status == 302)
        #expect(report.probes.first?.addresses == hijacked)
        #expect(report.probes.first?.bytes == 900)
        let json = report.json.serialized()
        #expect(json.contains(#""result":"dns-hijack","status":302"#))
        #expect(json.contains(#""addresses":["10.0.0.1"]"#))
    }

    @Test func theFirstLoginPageHeardWinsOverAProbeURL() throws {
        func result(_ url: String, _ exchange: ProbeOutcome) throws -> ProbeResult {
            ProbeResult(request: ProbeRequest(interface: eth0, family: .ipv4, probe: try probe(url), addresses: hijacked),
                        outcome: hijack(exchange), elapsedMilliseconds: 7, bytes: 90)
        }
        func portalURL(_ results: [ProbeResult]) -> String? {
            RoundJudge.report(interface: eth0, kind: .wifi, link: .probe([.ipv4]), results: results,
                                thresholdPercent: 50, elapsedMilliseconds: 9).assessment.portalURL
        }
        let timedOut = try result(probeURL, .failure(.timeout))
        let redirected = try result("http://other.example/x", response(302, location: "http://10.0.0.1/login"))
        let silent = try result("http://third.example/y", response(204))
        #expect(portalURL([timedOut, redirected]) == "http://10.0.0.1/login")
        #expect(portalURL([silent, timedOut]) == "http://third.example/y", "nothing better: the first probe's URL")
    }

    @Test func aFailedOrUnsentExchangeReportsNoStatus() throws {
        let request = ProbeRequest(interface: eth0, family: .ipv4, probe: try probe(probeURL), addresses: hijacked)
        for outcome in [hijack(.failure(.timeout)), ProbeOutcome.dnsHijack(hijacked)] {
            let report = RoundJudge.report(
                interface: eth0, kind: .wifi, link: .probe([.ipv4]),
                results: [ProbeResult(request: request, outcome: outcome, elapsedMilliseconds: 7, bytes: 90)],
                thresholdPercent: 50, elapsedMilliseconds: 9)
            #expect(report.assessment == Assessment(.captive, reason: .dnsHijack, portalURL: probeURL))
            #expect(report.probes.first?.status == nil)
        }
    }

    @Test func onlyAddressesOfAnotherHostOnTheNetworkAreFollowed() {
        #expect(DNSEvidence.followable(addresses("10.1.2.3", "100.64.0.1", "169.254.1.1", "192.168.1.1"), family: .ipv4)
                == addresses("10.1.2.3", "100.64.0.1", "169.254.1.1", "192.168.1.1"))
        #expect(DNSEvidence.followable(addresses("127.0.0.1", "10.1.2.3", "0.0.0.0"), family: .ipv4) == addresses("10.1.2.3"))
        #expect(DNSEvidence.followable(addresses("fd00::1", "::1", "::", "fe80::1"), family: .ipv6) == addresses("fd00::1", "fe80::1"))
        // Never this machine, never an address carried over the other family.
        for answer in ["127.0.0.1", "127.53.53.53", "0.0.0.0", "::1", "::", "::ffff:10.0.0.1", "::ffff:127.0.0.1"] {
            let family: AddressFamily = answer.contains(":") ? .ipv6 : .ipv4
            #expect(DNSEvidence.followable(addresses(answer), family: family).isEmpty, "\(answer)")
        }
    }
}
