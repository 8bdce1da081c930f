import Testing
import UplinkCore
import UplinkPattern
import UplinkTestSupport

/// `expect-regex`: PCRE2 syntax, patterns refused at a size or depth that
/// cannot be needed, and searches bounded in work and memory whatever the body is.
@Suite("Body patterns")
struct BodyPatternTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    private func repeated(_ text: String, toBytes count: Int) -> String {
        String(String(repeating: text, count: count / text.utf8.count + 1).prefix(count))
    }

    @Test func ordinaryPatternsMatch() throws {
        #expect(try BodyPattern(#"^status: ok \d+$"#).search("status: ok 42") == .matched)
        #expect(try BodyPattern(#"^status: ok \d+$"#).search("<html>status: ok 42") == .notMatched)
        #expect(try BodyPattern("(?i)<title>success</title>").search("<TITLE>Success</TITLE>") == .matched)
        #expect(try BodyPattern(#"^\s*ok\s*$"#).search(" ok\n") == .matched)
        #expect(try BodyPattern("a|b").search("xxb") == .matched)
        #expect(try BodyPattern("^$").search([UInt8]()) == .matched)
        #expect(try BodyPattern("x").search([UInt8]()) == .notMatched)
        // UTF mode: one character, not one byte.
        #expect(try BodyPattern("^caf.$").search("caf\u{e9}") == .matched)
        #expect(try BodyPattern("^\u{e9}t\u{e9}$").search("\u{e9}t\u{e9}") == .matched)
    }

    /// What README and uplinkd.conf(5) say about the syntax.
    @Test func documentedSyntax() throws {
        #expect(try BodyPattern(#"^\d$"#).search("\u{663}") == .notMatched)          // ARABIC-INDIC DIGIT THREE
        #expect(try BodyPattern(#"(*UCP)^\d$"#).search("\u{663}") == .matched)
        // README's rewrite of the catastrophic ^(\w+\s?)+$ decides on the same body.
        let rewritten = try BodyPattern(#"^\w+(\s\w+)*\s?$"#)
        #expect(rewritten.search("aaaa aaaa aaaa aaaa aaaa aaa!") == .notMatched)
        #expect(rewritten.search("aaaa aaaa aaaa aaaa aaaa aaa ") == .matched)
    }

    @Test func invalidUTF8InTheBodyIsNoError() throws {
        let body: [UInt8] = [0xff, 0xfe, 0x6f, 0x6b, 0xc3, 0x28, 0xe2, 0x82]   // ok between broken sequences
        #expect(try BodyPattern("ok").search(body) == .matched)
        #expect(try BodyPattern("^.").search(body) == .notMatched)             // 0xff is no character
        #expect(try BodyPattern("ok.$").search(body) == .notMatched)           // nor is a cut sequence
        #expect(try BodyPattern(#"\("#).search(body) == .matched)
        let noise = (0..<4_096).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        #expect(try BodyPattern("(.|\\s)*z{5}").search(noise) != .matched)
    }

    @Test(arguments: [3_000, 100_000])
    func deeplyNestedPatternsAreRefusedNotCrashed(depth: Int) {
        for open in ["[", "("] {
            let pattern = String(repeating: open, count: depth)
            #expect(throws: ValueError("regular expression of \(depth) bytes, longer than the 1024 allowed")) {
                try BodyPattern(pattern)
            }
        }
    }

    @Test func nestingIsLimitedWithinTheLengthLimit() throws {
        func nested(_ depth: Int) -> String { String(repeating: "(", count: depth) + "x" + String(repeating: ")", count: depth) }
        #expect(try BodyPattern(nested(64)).search("x") == .matched)
        #expect(throws: ValueError("invalid regular expression '\(nested(65))': parentheses are too deeply nested at offset 65")) {
            try BodyPattern(nested(65))
        }
        // Brackets do not nest in PCRE2: 1,000 of them are an unterminated class.
        #expect(throws: ValueError.self) { try BodyPattern(String(repeating: "[", count: 1_000)) }
        #expect(try BodyPattern(String(repeating: "[", count: 1_000) + "]").search("[") == .matched)
    }

    @Test func thePatternMayNotSplitACharacter() {
        #expect(throws: ValueError.self) { try BodyPattern(#"\C"#) }
    }

    /// The patterns that froze the loop for tens of seconds with Swift
    /// Regex: each now stops at its bound and says so. (No time is asserted; the
    /// benchmark Tests/bench/bench_regex.py measures it.)
    @Test(arguments: [
        (#"^(\w+\s?)+$"#, "aaaa aaaa aaaa aaaa aaaa aaa!"),   // 29 bytes, as in the issue
        ("(a+)+$", String(repeating: "a", count: 4_095) + "b"),
        ("a*a*a*a*b", String(repeating: "a", count: 4_094) + "cb"),
        ("(a|aa)+$", String(repeating: "a", count: 4_095) + "b"),
    ])
    func catastrophicBacktrackingStopsAtTheBound(pattern: String, body: String) throws {
        #expect(try BodyPattern(pattern).search(body) == .limitReached)
    }

    /// PCRE2's own match limit restarts at every start position, so these cost (body
    /// length)^2 under it: 25 s and 32 s on a 64 KiB body. The budget spans the search.
    @Test func quadraticSearchesStopAtTheBoundOverAllStartPositions() throws {
        let brackets = String(repeating: "<", count: 65_535) + ">"
        #expect(try BodyPattern("(?s)<.*W.*>").search(brackets) == .limitReached)
        #expect(try BodyPattern("<[^W]*X").search(String(repeating: "<", count: 65_534) + "WX") == .limitReached)
        #expect(try BodyPattern("<[^W]*+X").search(String(repeating: "<", count: 65_534) + "WX") == .limitReached)
    }

    @Test func aCatastrophicPatternStillMatchesWhatItMatchesEarly() throws {
        #expect(try BodyPattern("(a+)+$").search(String(repeating: "a", count: 4_096)) == .matched)
        #expect(try BodyPattern("a*a*a*a*b").search(String(repeating: "a", count: 4_096)) == .notMatched)
    }

    /// The budget must not refuse honest patterns on the largest body (64 KiB): a
    /// search that reads the body once uses a fraction of it.
    @Test(arguments: [
        ("<title>Success</title>", "<html><title>Login</title>", "lorem <b>ipsum</b> dolor "),
        ("(?i)success", "", "lorem ipsum dolor sit "),
        ("(?s)<html>.*Welcome.*</html>", "<html>", "lorem ipsum\ndolor sit amet "),
        (#"\d{3}-\d{4}"#, "", "call 555 1234 or 555-123 "),
        ("o+k", "", "xxxo"),
    ])
    func honestPatternsOnTheLargestBodyStayFarBelowTheBound(pattern: String, head: String, filler: String) throws {
        let regex = try BoundedRegex(pattern)
        let body = bytes(head + repeated(filler, toBytes: 65_536 - head.utf8.count))
        let search = regex.searchCountingSteps(body)
        #expect(search.outcome == .notMatched)
        #expect(search.steps * 4 < BoundedRegex.Limits.standard.steps, "\(search.steps) steps")
    }

    @Test func aLimitHitIsNeitherOnlineNorAPortal() throws {
        let expectation = Expectation(bodyPattern: try BodyPattern("(a+)+$"))
        let p = try probe("http://probe.example/health", expectation)
        #expect(Classifier.validate(ProbeResponse(status: 200, body: bytes(String(repeating: "a", count: 64) + "b")),
                                    for: expectation) == .patternLimit)
        #expect(Classifier.classify(response(200, body: String(repeating: "a", count: 64) + "b"), for: p)
                == .broken(reason: .patternLimit))
        // Even a page that looks like a login page: the pattern could not decide.
        let page = "<html><form action=\"/login\">" + String(repeating: "a", count: 64) + "b"
        #expect(Classifier.classify(response(200, body: page), for: p) == .broken(reason: .patternLimit))
        // A clear mismatch is still portal evidence, and a redirect still a portal.
        #expect(Classifier.classify(response(200, body: "<html>login</html>"), for: p)
                == .portal(reason: .bodyMismatch, portalURL: "http://probe.example/health"))
        #expect(Classifier.classify(response(302, location: "http://portal.example/"), for: p)
                == .portal(reason: .redirect, portalURL: "http://portal.example/"))
        #expect(Aggregator.assess([.broken(reason: .patternLimit)], thresholdPercent: 50)
                == Assessment(.limited, reason: .patternLimit))
    }

    @Test func cheaperChecksRefuseFirst() throws {
        // The contains check fails, so the catastrophic pattern is never searched.
        let expectation = Expectation(bodyContains: "ok", bodyPattern: try BodyPattern("(a+)+$"))
        #expect(Classifier.validate(ProbeResponse(status: 200, body: bytes(String(repeating: "a", count: 64) + "b")),
                                    for: expectation) == .invalid)
    }
}
