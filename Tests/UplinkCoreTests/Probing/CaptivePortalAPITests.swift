import Testing
import UplinkCore
import UplinkTestSupport

/// The captive-portal API (RFC 8908) and its URI from DHCP (RFC 8910): reading,
/// the verdict it gives, and the session kept between rounds.
@Suite("Captive-portal API")
struct CaptivePortalAPITests {
    func status(_ text: String) throws -> CaptivePortalStatus {
        try CaptivePortalAPI.status(from: Array(text.utf8))
    }

    @Test func theRFCExampleIsRead() throws {
        let read = try status("""
            {"captive": true, "user-portal-url": "https://example.org/portal.html",
             "venue-info-url": "https://flight.example.com/entertainment",
             "seconds-remaining": 326, "bytes-remaining": 65536, "can-extend-session": true}
            """)
        #expect(read == CaptivePortalStatus(captive: true, userPortalURL: "https://example.org/portal.html",
                                            venueInfoURL: "https://flight.example.com/entertainment",
                                            secondsRemaining: 326, bytesRemaining: 65_536, canExtendSession: true))
    }

    @Test func whatCannotBeTrustedIsLeftOutAndNamed() throws {
        let read = try status(#"{"captive": false, "user-portal-url": "http://plain.example/", "seconds-remaining": -5, "extra": [1, {"a": null}], "bytes-remaining": 12.7, "venue-info-url": 7}"#)
        #expect(read == CaptivePortalStatus(captive: false, bytesRemaining: 12, refused: [
            "user-portal-url http://plain.example/ refused: not https (RFC 8908)",
            "venue-info-url refused: not a string",
            "seconds-remaining refused: not a count from 0 to 315360000",
        ]))
        // check --json says what was refused beside what the API answered.
        let check = CaptivePortalCheck(uri: uri, status: read)
        #expect(check.problem == "user-portal-url http://plain.example/ refused: not https (RFC 8908); "
            + "venue-info-url refused: not a string; seconds-remaining refused: not a count from 0 to 315360000")
        #expect(check.json["captive"] == .bool(false) && check.json["user_portal_url"] == .null)
        // A quoted URL the network wrote is made safe before it is shown anywhere.
        let hostile = try status(#"{"captive": true, "user-portal-url": "http://x.example/a b\u0001\u00e9"}"#)
        #expect(hostile.refused == ["user-portal-url http://x.example/a%20b%01%C3%A9 refused: not a URL"])
        #expect(try status(#"{"captive": true, "user-portal-url": "https://login.example/"}"#).refused.isEmpty)
    }

    @Test(arguments: ["", "[]", "{}", #"{"captive": "yes"}"#, #"{"captive": true"#, #"{"captive": true} x"#,
                      String(repeating: "[", count: 40) + String(repeating: "]", count: 40), #"{"captive": 1e3}"#])
    func anythingElseIsRefused(text: String) {
        #expect(throws: CaptivePortalAPI.Invalid.self) { try status(text) }
    }

    @Test func stringsAreDecoded() throws {
        #expect(try JSONReader.parse(Array(#""a\"b\\c\u00e9\n""#.utf8)) == .string("a\"b\\cé\n"))
        #expect(throws: JSONReader.ParseError.self) { try JSONReader.parse([0x22, 0x01, 0x22]) }
    }

    @Test func theURIComesFromTheNewestDhclientLeaseOfTheInterface() {
        let leases = """
            lease {
              interface "wlan0";
              option captive-portal "https://old.example/api";
            }
            lease {
              interface "eth0";
              option captive-portal "https://eth.example/api";
            }
            lease {
              interface "wlan0";
              option captive-portal "https://capport.example:8443/api?x=1";
            }
            """
        #expect(CaptivePortalAPI.dhclientURI(leases, interface: "wlan0")?.description == "https://capport.example:8443/api?x=1")
        #expect(CaptivePortalAPI.dhclientURI(leases, interface: "wwan0") == nil)
        // Plain http and the "no portal" URN are not an API.
        #expect(CaptivePortalAPI.dhclientURI("lease {\n interface \"wlan0\";\n option captive-portal \"http://x.example/\";\n}\n",
                                             interface: "wlan0") == nil)
        #expect(CaptivePortalAPI.uri("urn:ietf:params:capport:unrestricted") == nil)
        #expect(CaptivePortalAPI.networkdURI("ADDRESS=1\nCAPTIVE_PORTAL=https://n.example/api\n")?.description == "https://n.example/api")
    }

    func report(_ api: CaptivePortalCheck?, probes outcome: ProbeOutcome) -> RoundReport {
        let probe = ProbeSpec(name: "p", url: try! ProbeURL(parsing: "http://192.0.2.80/generate_204"), expectation: Expectation())
        let result = ProbeResult(request: ProbeRequest(interface: "wlan0", family: .ipv4, probe: probe), outcome: outcome,
                                 elapsedMilliseconds: 5, bytes: 100)
        return RoundJudge.report(interface: "wlan0", kind: .wifi, link: .probe([.ipv4]), results: [result],
                                   thresholdPercent: 50, elapsedMilliseconds: 5, captivePortal: api)
    }

    let uri = try! ProbeURL(parsing: "https://capport.example/api")

    @Test func anAPISayingCaptiveDecidesAtOnceWithItsLoginPage() {
        let api = CaptivePortalCheck(uri: uri, status: CaptivePortalStatus(captive: true, userPortalURL: "https://login.example/"), bytes: 900)
        let held = report(api, probes: .response(ProbeResponse(status: 204)))
        #expect(held.assessment == Assessment(.captive, reason: .capport, portalURL: "https://login.example/"))
        #expect(held.families[.ipv4]?.reason == .capport)
        #expect(held.totalBytes == 1_000)
    }

    /// RFC 8908 wants an https page: without one (an http URL refused, or none at
    /// all) the portal URL comes from the probes' evidence, never from the API's own
    /// URI (a JSON endpoint, no page for a person).
    @Test(arguments: [nil, "http://portal.lab/login"] as [String?])
    func anAPIWithoutAnHttpsPageLeavesThePortalURLToTheProbes(refusedPage: String?) throws {
        let body = refusedPage.map { #"{"captive": true, "user-portal-url": "\#($0)"}"# } ?? #"{"captive": true}"#
        let read = try status(body)
        #expect(read.userPortalURL == nil)
        let api = CaptivePortalCheck(uri: uri, status: read)
        #expect(api.problem == refusedPage.map { "user-portal-url \($0) refused: not https (RFC 8908)" })
        // A redirect: its Location.
        let redirected = report(api, probes: .response(ProbeResponse(status: 302, location: "/login?from=probe")))
        #expect(redirected.assessment == Assessment(.captive, reason: .capport, portalURL: "http://192.0.2.80/login?from=probe"))
        #expect(redirected.families[.ipv4]?.portalURL == "http://192.0.2.80/login?from=probe")
        #expect(redirected.json["captive_portal_api"]?["problem"] == (api.problem.map(JSONValue.string) ?? .null))
        // A page naming its login page: the WISPr LoginURL first, else the meta refresh.
        let wispr = "<html><!--<WISPAccessGatewayParam><Redirect><LoginURL>https://login.lab/wispr</LoginURL>"
            + "</Redirect></WISPAccessGatewayParam>--><meta http-equiv=\"refresh\" content=\"0; url=http://login.lab/meta\"></html>"
        let page = report(api, probes: .response(ProbeResponse(status: 200, body: Array(wispr.utf8))))
        #expect(page.assessment.portalURL == "https://login.lab/wispr" && page.assessment.portalIsWISPrLogin)
        let meta = "<html><head><meta http-equiv=\"refresh\" content=\"0; url=http://login.lab/meta\"></head></html>"
        #expect(report(api, probes: .response(ProbeResponse(status: 200, body: Array(meta.utf8)))).assessment.portalURL
            == "http://login.lab/meta")
        // A page without a hint: the probe URL, which a browser opens onto the portal.
        let bare = report(api, probes: .response(ProbeResponse(status: 200, body: Array("<html>hotel</html>".utf8))))
        #expect(bare.assessment.portalURL == "http://192.0.2.80/generate_204")
        // Probes that heard no portal: captive by the API's word, with no page to offer.
        for outcome in [ProbeOutcome.response(ProbeResponse(status: 204)), .failure(.timeout)] {
            let held = report(api, probes: outcome)
            #expect(held.assessment == Assessment(.captive, reason: .capport, portalURL: nil))
            #expect(held.json["portal_url"] == .null)
        }
    }

    @Test func anotherFamilysEvidenceNamesThePage() {
        let api = CaptivePortalCheck(uri: uri, status: CaptivePortalStatus(captive: true))
        let probe = ProbeSpec(name: "p", url: try! ProbeURL(parsing: "http://probe.example/generate_204"), expectation: Expectation())
        func result(_ family: AddressFamily, _ outcome: ProbeOutcome) -> ProbeResult {
            ProbeResult(request: ProbeRequest(interface: "wlan0", family: family, probe: probe), outcome: outcome,
                        elapsedMilliseconds: 5, bytes: 100)
        }
        let held = RoundJudge.report(interface: "wlan0", kind: .wifi, link: .probe([.ipv4, .ipv6]),
                                       results: [result(.ipv4, .failure(.timeout)),
                                                 result(.ipv6, .response(ProbeResponse(status: 302, location: "http://portal.lab/v6")))],
                                       thresholdPercent: 50, elapsedMilliseconds: 5, captivePortal: api)
        #expect(held.families[.ipv4] == Assessment(.captive, reason: .capport, portalURL: "http://portal.lab/v6"))
        #expect(held.families[.ipv6] == Assessment(.captive, reason: .capport, portalURL: "http://portal.lab/v6"))
        #expect(held.assessment.portalURL == "http://portal.lab/v6")
    }

    @Test func theAgentHooksAndStateGetTheProbesPageWhenTheAPINamesNone() throws {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.captivePortal["wlan0"] = try status(#"{"captive": true, "user-portal-url": "http://portal.lab/login"}"#)
        driver.redirecting["wlan0"] = "http://portal.lab/login?orig=1"
        driver.links([uplink("wlan0", index: 3, kind: .wifi)])
        driver.answerAll()
        let held = driver.hooks.last { $0.kind == .verdict && $0.interface == "wlan0" }
        #expect(held?.verdict == .captive && held?.reason == .capport)
        #expect(held?.portalURL == "http://portal.lab/login?orig=1")
        #expect(held?.environment.contains("UPLINK_PORTAL_URL=http://portal.lab/login?orig=1") == true)
        let state = driver.core.state(now: driver.instant, pid: 1)
        #expect(state.uplinks.first?.portalURL == "http://portal.lab/login?orig=1")
        #expect(StateFileFormat.encode(state).contains("\nuplink wlan0 portal_url http://portal.lab/login?orig=1\n"))
        #expect(!StateFileFormat.encode(state).contains("capport.example"))
    }

    @Test func anAPISayingNotCaptiveLeavesItToTheProbes() {
        let free = CaptivePortalCheck(uri: uri, status: CaptivePortalStatus(captive: false))
        #expect(report(free, probes: .response(ProbeResponse(status: 204))).assessment.verdict == .online)
        // The portal still intercepts: not online, whatever the API says.
        let intercepted = report(free, probes: .response(ProbeResponse(status: 302, location: "http://portal.example/")))
        #expect(intercepted.assessment == Assessment(.captive, reason: .redirect, portalURL: "http://portal.example/"))
        // An API that did not answer is no evidence either way.
        let silent = CaptivePortalCheck(uri: uri, status: nil, problem: "no answer")
        #expect(report(silent, probes: .response(ProbeResponse(status: 204))).assessment.verdict == .online)
    }

    @Test func theSessionIsAskedAgainBeforeItEnds() {
        let now = Instant(monotonicMilliseconds: 10_000, wallSeconds: 1_800_000_000)
        let long = CaptivePortalSession(CaptivePortalStatus(captive: false, secondsRemaining: 3_600, bytesRemaining: 5), now: now)
        #expect(long?.endsWallSeconds == 1_800_003_600)
        #expect(long?.recheckMilliseconds == 10_000 + 3_540_000)
        #expect(long?.secondsRemaining(atWallSeconds: 1_800_003_000) == 600)
        #expect(long?.secondsRemaining(atWallSeconds: 1_900_000_000) == 0)
        let short = CaptivePortalSession(CaptivePortalStatus(captive: false, secondsRemaining: 40), now: now)
        #expect(short?.recheckMilliseconds == 10_000 + 30_000)
        #expect(CaptivePortalSession(CaptivePortalStatus(captive: true), now: now) == nil)
    }

    @Test func theSessionRoundTripsThroughTheStateFile() throws {
        var state = AgentState(primary: "wlan0", uplinks: [UplinkStatus(interface: "wlan0", kind: .wifi, verdict: .online,
                                                                        reason: .validated, sinceWallSeconds: 1_800_000_000)],
                               writtenWallSeconds: 1_800_000_010, pid: 42)
        state.uplinks[0].session = CaptivePortalSession(endsWallSeconds: 1_800_003_600, bytesRemaining: 65_536)
        let text = StateFileFormat.encode(state)
        #expect(text.contains("\nuplink wlan0 session_ends 1800003600\nuplink wlan0 session_bytes_remaining 65536\n"))
        let read = try StateFileFormat.decode(text)
        #expect(read.uplinks[0].session.endsWallSeconds == 1_800_003_600)
        #expect(read.uplinks[0].session.bytesRemaining == 65_536)
    }

    @Test func theAgentAsksAgainBeforeTheSessionEndsAndPublishesIt() {
        // A metered uplink is probed every 20 minutes: its 5-minute session is looked
        // at again after 4 minutes, not after 20 (its cadence as the primary left out).
        var driver = CoreDriver(CoreDriver.configuration { $0.probing.metering.primaryInterval = .off })
        driver.captivePortal["wwan0"] = CaptivePortalStatus(captive: false, secondsRemaining: 300, bytesRemaining: 10_000)
        driver.links([uplink("wwan0", index: 4, kind: .wwan)])
        driver.answerAll()
        #expect(driver.core.state(now: driver.instant, pid: 1).uplinks.first?.verdict == .online)
        let state = driver.core.state(now: driver.instant, pid: 1)
        #expect(state.uplinks.first?.session.endsWallSeconds == driver.instant.wallSeconds + 300)
        #expect(state.uplinks.first?.session.bytesRemaining == 10_000)
        let before = driver.plans(of: "wwan0", .full).count
        driver.advance(to: 239_000)
        #expect(driver.plans(of: "wwan0").count == driver.plans(of: "wwan0", .full).count, "no light round in between")
        #expect(driver.plans(of: "wwan0", .full).count == before)
        // By then the session is over: the API says so at the look before the end.
        driver.captivePortal["wwan0"] = CaptivePortalStatus(captive: true, userPortalURL: "https://login.example/")
        driver.advance(to: 241_000)
        #expect(driver.plans(of: "wwan0", .full).count == before + 1)
        let held = driver.hooks.last { $0.kind == .verdict && $0.interface == "wwan0" }
        #expect(held?.verdict == .captive && held?.reason == .capport && held?.portalURL == "https://login.example/")
    }

    @Test func hostileFiguresNeitherCrashNorTakeOver() throws {
        // A figure that would overflow the re-check's arithmetic is left out.
        let huge = try status(#"{"captive": false, "seconds-remaining": 9223372036854775807, "bytes-remaining": 9223372036854775807}"#)
        #expect(huge.secondsRemaining == nil && huge.bytesRemaining == nil)
        let now = Instant(monotonicMilliseconds: 5_000, wallSeconds: 1_800_000_000)
        #expect(CaptivePortalSession(huge, now: now) == nil)
        // A session at its very end is looked at again after 10 s, not every second.
        let ending = CaptivePortalSession(CaptivePortalStatus(captive: false, secondsRemaining: 0), now: now)
        #expect(ending?.recheckMilliseconds == 5_000 + CaptivePortalSession.shortestRecheckMilliseconds)
        // A held session has none to re-check.
        #expect(CaptivePortalSession(CaptivePortalStatus(captive: true, secondsRemaining: 0), now: now) == nil)
        // Exponents are read, not refused.
        #expect(try status(#"{"captive": false, "seconds-remaining": 1e3, "bytes-remaining": 2.5E1}"#).secondsRemaining == 1_000)
        #expect(try status(#"{"captive": false, "bytes-remaining": 2.5E1}"#).bytesRemaining == 25)
    }

    @Test func onlyAWISPrBlockMakesThePortalURLALoginURL() {
        let probe = ProbeSpec(name: "p", url: try! ProbeURL(parsing: "http://192.0.2.80/hotspot-detect.html"),
                              expectation: Expectation(bodyContains: "Success"))
        func assess(_ response: ProbeResponse) -> Assessment {
            let result = ProbeResult(request: ProbeRequest(interface: "wlan0", family: .ipv4, probe: probe),
                                     outcome: .response(response), elapsedMilliseconds: 5, bytes: 100)
            return RoundJudge.report(interface: "wlan0", kind: .wifi, link: .probe([.ipv4]), results: [result],
                                       thresholdPercent: 50, elapsedMilliseconds: 5).assessment
        }
        let wispr = Array(("<html><!--<?xml version=\"1.0\"?><WISPAccessGatewayParam><Redirect><MessageType>100</MessageType>"
            + "<LoginURL>https://login.example/wispr</LoginURL></Redirect></WISPAccessGatewayParam>--></html>").utf8)
        let page = assess(ProbeResponse(status: 200, body: wispr))
        #expect(page.portalURL == "https://login.example/wispr" && page.portalIsWISPrLogin)
        let redirect = assess(ProbeResponse(status: 302, location: "https://login.example/wispr"))
        #expect(redirect.portalURL == "https://login.example/wispr" && !redirect.portalIsWISPrLogin)
        var event = HookEvent(kind: .verdict, interface: "wlan0", interfaceKind: .wifi, verdict: .captive, previousVerdict: .online,
                              reason: .bodyMismatch, portalURL: page.portalURL, primary: nil, previousPrimary: nil, wallSeconds: 0)
        #expect(event.environment.contains("UPLINK_PORTAL_WISPR=no"))
        event.portalIsWISPrLogin = true
        #expect(event.environment.contains("UPLINK_PORTAL_WISPR=yes"))
    }
}
