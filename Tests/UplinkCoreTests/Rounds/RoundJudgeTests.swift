import Testing
import UplinkCore
import UplinkTestSupport

@Suite("RoundJudge and RoundReport")
struct RoundJudgeTests {
    func report(_ verdict: Verdict) -> RoundReport {
        RoundReport(interface: "eth0", kind: .ethernet, assessment: Assessment(verdict, reason: .validated), elapsedMilliseconds: 1)
    }

    @Test func exitStatusIsTheHighest() {
        #expect(RoundJudge.exitStatus(for: [report(.online), report(.captive), report(.limited)]) == 2)
        #expect(RoundJudge.exitStatus(for: [report(.online), report(.down), report(.captive)]) == 3)
        #expect(RoundJudge.exitStatus(for: [report(.online), report(.online)]) == 0)
        #expect(RoundJudge.exitStatus(for: [report(.captive)]) == 1)
        #expect(RoundJudge.exitStatus(for: [report(.unknown), report(.online)]) == 3)
        #expect(RoundJudge.exitStatus(for: []) == 0)
    }

    @Test func requestsSkipFamiliesThatDoNotMatchAnIPLiteral() throws {
        let name = try #require(InterfaceName("wlan0"))
        let v4 = try probe("http://192.0.2.1/generate_204", name: "v4")
        let v6 = try probe("http://[2001:db8::1]/generate_204", name: "v6")
        let host = try probe("http://probe.example/generate_204", name: "host")
        let requests = RoundJudge.requests(for: name, link: .probe([.ipv4, .ipv6]), probes: [v4, v6, host])
        #expect(requests.map { "\($0.family.rawValue):\($0.probe.name)" } == ["ipv4:v4", "ipv4:host", "ipv6:v6", "ipv6:host"])
        #expect(requests.allSatisfy { $0.interface == name })

        let v6Only = RoundJudge.requests(for: name, link: .probe([.ipv6]), probes: [v4, host])
        #expect(v6Only.map(\.probe.name) == ["host"])
        #expect(v6Only.map(\.family) == [.ipv6])
    }

    @Test func noRequestsWhenDown() throws {
        let name = try #require(InterfaceName("eth0"))
        let host = try probe("http://probe.example/")
        #expect(RoundJudge.requests(for: name, link: .down(reason: .noCarrier), probes: [host]).isEmpty)
    }

    @Test func reportForDownLink() throws {
        let name = try #require(InterfaceName("eth0"))
        let r = RoundJudge.report(interface: name, kind: .ethernet, link: .down(reason: .noCarrier), results: [],
                                    thresholdPercent: 50, elapsedMilliseconds: 3)
        #expect(r.assessment == Assessment(.down, reason: .noCarrier))
        #expect(r.families.isEmpty)
        #expect(r.probes.isEmpty)
        #expect(r.humanLine == "eth0: down (ethernet, no-carrier) in 3 ms")
    }

    @Test func reportIsBestOfFamilies() throws {
        let name = try #require(InterfaceName("wlan0"))
        let p = try probe("http://probe.example/generate_204", name: "g")
        let v4 = ProbeRequest(interface: name, family: .ipv4, probe: p)
        let v6 = ProbeRequest(interface: name, family: .ipv6, probe: p)
        let results = [
            ProbeResult(request: v4, outcome: response(302, location: "http://portal.example/"), elapsedMilliseconds: 5, bytes: 300),
            ProbeResult(request: v6, outcome: response(204), elapsedMilliseconds: 7, bytes: 200),
        ]
        let r = RoundJudge.report(interface: name, kind: .wifi, link: .probe([.ipv4, .ipv6]), results: results,
                                    thresholdPercent: 50, elapsedMilliseconds: 12)
        #expect(r.assessment == Assessment(.online, reason: .validated))
        #expect(r.families[.ipv4] == Assessment(.captive, reason: .redirect, portalURL: "http://portal.example/"))
        #expect(r.families[.ipv6] == Assessment(.online, reason: .validated))
        #expect(r.probes.map(\.family) == [.ipv4, .ipv6])
        #expect(r.probes.map(\.status) == [302, 204])
        #expect(r.humanLine == "wlan0: online (wifi, validated) [ipv4 captive, ipv6 online] in 12 ms")
    }

    @Test func familyWithoutResultsIsLimited() throws {
        let name = try #require(InterfaceName("wlan0"))
        let r = RoundJudge.report(interface: name, kind: .wifi, link: .probe([.ipv6]), results: [],
                                    thresholdPercent: 50, elapsedMilliseconds: 1)
        #expect(r.assessment == Assessment(.limited, reason: .noProbeForFamily))
    }

    @Test func jsonHasTheContractKeysAndNoSecret() throws {
        let secret = "Bearer s3cr3t-T0KEN"
        let name = try #require(InterfaceName("wlan0"))
        let p = try probe("http://probe.example/generate_204", name: "corp", authorization: secret)
        let request = ProbeRequest(interface: name, family: .ipv4, probe: p)
        let results = [ProbeResult(request: request, outcome: response(302, location: "/login"), elapsedMilliseconds: 9, bytes: 321)]
        let r = RoundJudge.report(interface: name, kind: .wifi, link: .probe([.ipv4]), results: results,
                                    thresholdPercent: 50, elapsedMilliseconds: 15)
        let json = r.json
        guard case .object(let members) = json else {
            Issue.record("report JSON is not an object")
            return
        }
        #expect(members.map(\.0) == ["interface", "kind", "verdict", "reason", "portal_url", "elapsed_ms", "families", "quality", "looks", "dns", "captive_portal_api", "modem", "probes"])
        let text = json.serialized()
        #expect(text.hasPrefix(#"{"interface":"wlan0","kind":"wifi","verdict":"captive","reason":"redirect","portal_url":"http://probe.example/login","elapsed_ms":15,"families":{"ipv4":{"verdict":"captive","reason":"redirect","portal_url":"http://probe.example/login","quality":{"rtt_ms":null,"rtt_variation_ms":null,"loss_pct":null,"attempts":0}}},"quality":{"rtt_ms":null,"rtt_variation_ms":null,"loss_pct":null,"attempts":0},"looks":1,"dns":null,"captive_portal_api":null,"modem":null,"probes":["#))
        #expect(text.contains(#"{"name":"corp","url":"http://probe.example/generate_204","family":"ipv4","result":"redirect","status":302,"elapsed_ms":9,"bytes":321,"addresses":[],"connect_ms":null}"#))
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("Bearer"))
        #expect(!r.humanLine.contains("s3cr3t"))
    }

    @Test func jsonPortalURLIsNullWhenNotCaptive() {
        let r = RoundReport(interface: "eth0", kind: .ethernet, assessment: Assessment(.limited, reason: .timeout),
                            elapsedMilliseconds: 2)
        #expect(r.json.serialized() == #"{"interface":"eth0","kind":"ethernet","verdict":"limited","reason":"timeout","portal_url":null,"elapsed_ms":2,"families":{},"quality":{"rtt_ms":null,"rtt_variation_ms":null,"loss_pct":null,"attempts":0},"looks":1,"dns":null,"captive_portal_api":null,"modem":null,"probes":[]}"#)
    }
}
