import Testing
import UplinkCore
import UplinkTestSupport

/// Input that portals, on-path hosts or a damaged file control must not crash or
/// smuggle anything through.
@Suite("Hostile input")
struct HostileInputTests {
    private let base = try! ProbeURL(parsing: "http://probe.example/check")

    @Test func unicodeThatChangesLengthWhenLowercasedDoesNotCrash() {
        // U+212A (3 bytes) lowercases to "k" (1 byte), U+023A (2 bytes) to 3 bytes.
        let body = "\u{212A}<meta http-equiv=\"refresh\" content=\"\u{23A}\u{23A}url=\">"
        #expect(PortalHints.metaRefreshURL(in: body) == nil)
        let shifted = "\u{212A}\u{212A}<META HTTP-EQUIV=\"Refresh\" CONTENT=\"0; URL=http://portal.example/\u{23A}\">"
        #expect(PortalHints.metaRefreshURL(in: shifted) == "http://portal.example/\u{23A}")
        let wispr = "\u{212A}<WISPAccessGatewayParam><LoginURL>http://login.example/</LoginURL></WISPAccessGatewayParam>"
        #expect(PortalHints.wisprLoginURL(in: wispr) == "http://login.example/")
    }

    @Test func portalURLsAreMadeOneSafeToken() {
        let response = ProbeResponse(status: 302, location: "http://portal.example/a b\nX-Evil: 1\u{1b}[2J")
        let probe = ProbeSpec(name: "p", url: base, expectation: Expectation(status: 204))
        guard case .portal(_, let url?) = Classifier.classify(.response(response), for: probe) else {
            Issue.record("expected a portal")
            return
        }
        #expect(url == "http://portal.example/a%20b%0AX-Evil:%201%1B[2J")
        let long = PortalHints.safeURL("http://portal.example/" + String(repeating: "a", count: 10_000))
        #expect(long.utf8.count == PortalHints.maximumURLBytes)
    }

    @Test func aPortalURLIsCutAfterEncodingAndTheSameEverywhere() throws {
        // 2,000 bytes of "é" (C3 A9) encode to 6,000: cut after encoding, never in a %XX.
        let raw = "http://portal.example/" + String(repeating: "\u{e9}", count: 1_000)
        let safe = PortalHints.safeURL(raw)
        #expect(safe.utf8.count <= PortalHints.maximumURLBytes)
        #expect(safe.utf8.count > PortalHints.maximumURLBytes - 3)
        #expect(safe.hasSuffix("%C3") || safe.hasSuffix("%A9"))
        #expect(PortalHints.safeURL(safe) == safe)
        // The state file carries the same URL `check` and the hooks get.
        let state = AgentState(primary: nil, uplinks: [UplinkStatus(interface: "wlan0", kind: .wifi, verdict: .captive,
                                                                    reason: .redirect, sinceWallSeconds: 1, portalURL: safe)],
                               writtenWallSeconds: 1, pid: 1)
        let decoded = try StateFileFormat.decode(StateFileFormat.encode(state))
        #expect(decoded.uplinks.first?.portalURL == safe)
    }

    @Test(arguments: [
        "format 1\n   \n",
        "format 1\npid 99999999999999\n",
        "format 1\npid -4\n",
        "format 1\nwritten -9223372036854775808\n",
        "format 1\nuplink eth0 ethernet online validated -9223372036854775808 - - 0 - no -\n",
        "format 1\nuplink eth0 ethernet online validated 5 - - -1 - no -\n",
        "format 1\nuplink eth0\n",
    ])
    func damagedStateFilesAreErrorsNotCrashes(text: String) {
        do {
            let state = try StateFileFormat.decode(text)
            // Only the blank line is harmless.
            #expect(text == "format 1\n   \n")
            #expect(state.uplinks.isEmpty)
        } catch {
            #expect(error.line > 0)
        }
    }

    @Test func authorizationNeedsHTTPSAndOneCleanLine() {
        var draft = ProbeDraft()
        #expect(throws: ValueError.self) { try draft.apply("authorization", "Bearer a\r\nX-Evil: 1") }
        #expect(throws: ValueError.self) { try draft.apply("authorization", "Bearer a\u{7f}") }
        do {
            try draft.apply("authorization", "Bearer token")
            try draft.apply("url", "http://probe.example/")
            _ = try draft.build(name: "clear")
            Issue.record("an Authorization header over plain HTTP must be refused")
        } catch let error as ProbeDraft.BuildError {
            #expect(error.key == "authorization")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func quotedEscapesCannotSmuggleALineBreak() {
        do {
            _ = try ConfigurationParser(fileName: "c.conf").parse("[probe p]\nurl = https://p.example/\nauthorization = \"a\\nb\"\n")
            Issue.record("expected an error")
        } catch {
            #expect(error.key == "authorization")
            #expect(error.line == 3)
        }
    }
}
