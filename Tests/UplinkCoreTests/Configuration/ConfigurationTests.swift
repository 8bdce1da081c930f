import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Configuration parsing")
struct ConfigurationTests {
    @Test func fullValidFile() throws {
        let text = #"""
            # uplinkd test configuration
            ; semicolon comment
              # indented comment

            [check]
            timeout = 2500ms
            success-threshold = 75%
            body-limit = 8KiB
            https-only = no
            default-probes = no
            validator-timeout = 1s

            [probe corp-health]
            url = https://Portal.Corp.example:8080/health?x=1#frag
            expect-status = 200
            expect-body = "  ok  "
            expect-contains = ok
            expect-regex = ^\s*ok\s*$
            validator = /usr/local/bin/check-body --strict  -v
            authorization = Bearer abc def

            [probe v6.lit]
            url = http://[2001:db8::1]/generate_204

            [interface usb0]
            kind = wwan
            [ interface   wlp2s0 ]
            kind = other
            """#
        let c = try parse(text)
        #expect(c.probing.timeoutMilliseconds == 2_500)
        #expect(c.probing.successThresholdPercent == 75)
        #expect(c.bodyLimitBytes == 8_192)
        #expect(c.httpsOnly == false)
        #expect(c.useDefaultProbes == false)
        #expect(c.validatorTimeoutMilliseconds == 1_000)
        #expect(c.configuredKind(of: "usb0") == .wwan)
        #expect(c.configuredKind(of: "wlp2s0") == .other)
        #expect(c.interfaces.count == 2)

        try #require(c.customProbes.count == 2)
        #expect(c.probes.map(\.name) == ["corp-health", "v6.lit"])
        let corp = c.customProbes[0]
        #expect(corp.url.description == "https://portal.corp.example:8080/health?x=1")
        #expect(corp.url.port == 8080)
        #expect(corp.expectation.status == 200)
        #expect(corp.expectation.bodyEquals == "  ok  ")
        #expect(corp.expectation.bodyContains == "ok")
        #expect(corp.expectation.bodyPattern?.source == #"^\s*ok\s*$"#)
        #expect(corp.expectation.bodyPattern?.search(" ok\n") == .matched)
        #expect(corp.expectation.validator == ValidatorCommand(path: "/usr/local/bin/check-body", arguments: ["--strict", "-v"]))
        #expect(corp.authorization == "Bearer abc def")

        let v6 = c.customProbes[1]
        #expect(v6.url.host == "2001:db8::1")
        #expect(v6.url.isIPv6Literal)
        #expect(v6.expectation == Expectation(status: 204))
        #expect(v6.authorization == nil)
    }

    @Test func otherDurationAndSizeForms() throws {
        let c = try parse("[check]\ntimeout = 1m\nvalidator-timeout = 100ms\nbody-limit = 256\nsuccess-threshold = 100\nhttps-only = off\n")
        #expect(c.probing.timeoutMilliseconds == 60_000)
        #expect(c.validatorTimeoutMilliseconds == 100)
        #expect(c.bodyLimitBytes == 256)
        #expect(c.probing.successThresholdPercent == 100)
        #expect(c.httpsOnly == false)
        #expect(c.useDefaultProbes)
    }

    @Test func builtInDefaultsWhenEmpty() throws {
        let empty = try parse("")
        #expect(empty == Configuration())
        let defaults = empty.probingSettings(for: "eth0", kind: .ethernet, metered: false)
        #expect(defaults.timeoutMilliseconds == 5_000)
        #expect(defaults.successThresholdPercent == 50)
        #expect(empty.bodyLimitBytes == 4_096)
        #expect(empty.httpsOnly == false)
        #expect(empty.useDefaultProbes)
        #expect(empty.validatorTimeoutMilliseconds == 2_000)
        #expect(empty.customProbes.isEmpty)
        #expect(empty.interfaces.isEmpty)
        #expect(empty.probes.map(\.name) == ["apple", "google", "firefox", "microsoft", "debian"])
        #expect(empty.probes.allSatisfy { $0.url.scheme == .http })

        #expect(try parse("# only a comment\n\n; and another\n[check]\n") == Configuration())
    }

    @Test func customProbesFollowDefaults() throws {
        let c = try parse("[probe mine]\nurl = http://probe.example/\n")
        #expect(c.probes.map(\.name) == ["apple", "google", "firefox", "microsoft", "debian", "mine"])
    }

    @Test func sameKeyInDifferentSectionsIsAllowed() throws {
        let c = try parse("[probe a]\nurl = http://a.example/\n[probe b]\nurl = http://b.example/\n")
        #expect(c.customProbes.map(\.url.host) == ["a.example", "b.example"])
    }

    @Test func quotedValuesKeepSpacesAndEscapes() throws {
        let text = #"""
            [probe q]
            url = http://q.example/
            expect-body = "  say \"hi\" \\ then\n\tbye  "
            expect-contains = a "quoted" word
            """#
        let probe = try #require(try parse(text).customProbes.first)
        #expect(probe.expectation.bodyEquals == "  say \"hi\" \\ then\n\tbye  ")
        // Quotes that do not start the value are kept literally.
        #expect(probe.expectation.bodyContains == #"a "quoted" word"#)
    }

    @Test func valuesRunToEndOfLineIncludingHash() throws {
        let probe = try #require(try parse("[probe h]\nurl = http://h.example/a#b\nexpect-body = a # b ; c\n").customProbes.first)
        #expect(probe.expectation.bodyEquals == "a # b ; c")
        #expect(probe.url.pathAndQuery == "/a")
    }

    @Test func crlfLinesAreAccepted() throws {
        let c = try parse("# comment\r\n[check]\r\ntimeout = 3s\r\nhttps-only = no\r\n\r\n[probe crlf]\r\nurl = http://crlf.example/x\r\nexpect-body = \"two words\"\r\n")
        #expect(c.probing.timeoutMilliseconds == 3_000)
        let probe = try #require(c.customProbes.first)
        #expect(probe.url.pathAndQuery == "/x")
        #expect(probe.expectation.bodyEquals == "two words")
    }

    @Test func crlfFileWithoutLeadingCommentIsAccepted() throws {
        let c = try parse("[check]\r\nsuccess-threshold = 60%\r\n")
        #expect(c.probing.successThresholdPercent == 60)
    }

    @Test func crlfErrorsCountLines() {
        expectError("[check]\r\n\r\ntimeout = 3\r\n", line: 3, key: "timeout")
    }

    // MARK: errors

    @Test func descriptionNamesFileLineAndKey() {
        let error = parseError("[check]\n\ntimeout = 5\n")
        #expect(error?.description == "\(fileName):3: key 'timeout': \(error?.message ?? "")")
        #expect(error?.description.hasPrefix("/etc/uplinkd/test.conf:3: key 'timeout': expected a duration") == true)

        let noKey = ConfigurationError(file: "f.conf", line: 7, key: nil, message: "boom")
        #expect(noKey.description == "f.conf:7: boom")
        let noLine = ConfigurationError(file: "f.conf", line: nil, key: "k", message: "boom")
        #expect(noLine.description == "f.conf: key 'k': boom")
    }

    @Test func unknownKey() {
        expectError("[check]\ntimeout = 5s\nretries = 3\n", line: 3, key: "retries", mentioning: "unknown key")
        expectError("[probe a]\nurl = http://a.example/\ncolour = red\n", line: 3, key: "colour", mentioning: "unknown key")
        expectError("[interface eth0]\nmtu = 1500\n", line: 2, key: "mtu", mentioning: "unknown key")
    }

    @Test func unknownSection() {
        expectError("[check]\ntimeout = 5s\n[global]\n", line: 3, key: nil, mentioning: "unknown section")
        expectError("[probe]\nurl = http://a.example/\n", line: 1, key: nil)
        expectError("[check extra]\n", line: 1, key: nil)
        expectError("[check\n", line: 1, key: nil)
    }

    @Test func keyOutsideSection() {
        expectError("# leading comment\ntimeout = 5s\n[check]\n", line: 2, key: "timeout", mentioning: "outside")
    }

    @Test func lineWithoutEquals() {
        expectError("[check]\ntimeout 5s\n", line: 2, key: nil)
    }

    @Test func repeatedKey() {
        expectError("[check]\ntimeout = 5s\nsuccess-threshold = 50%\ntimeout = 6s\n", line: 4, key: "timeout", mentioning: "twice")
        expectError("[probe a]\nurl = http://a.example/\nurl = http://b.example/\n", line: 3, key: "url")
    }

    @Test func repeatedSection() {
        expectError("[check]\ntimeout = 5s\n[check]\n", line: 3, key: nil, mentioning: "twice")
        expectError("[probe a]\nurl = http://a.example/\n[probe  a]\nurl = http://a.example/\n", line: 3, key: nil)
        expectError("[interface eth0]\nkind = ethernet\n\n[interface eth0]\n", line: 4, key: nil)
    }

    @Test(arguments: [
        ("5", "timeout"),          // no unit
        ("five s", "timeout"),
        ("50ms", "timeout"),       // below 100ms
        ("61s", "timeout"),        // above 60s
        ("2h", "validator-timeout"),
        ("99ms", "validator-timeout"),
    ])
    func badDuration(value: String, key: String) {
        expectError("[check]\n\(key) = \(value)\n", line: 2, key: key)
    }

    @Test(arguments: ["0%", "101%", "abc", "-5", "50%%", ""])
    func badPercent(value: String) {
        expectError("[check]\nsuccess-threshold = \(value)\n", line: 2, key: "success-threshold", mentioning: "percentage")
    }

    @Test(arguments: ["maybe", "1", "y", ""])
    func badBoolean(value: String) {
        expectError("[check]\nhttps-only = \(value)\n", line: 2, key: "https-only", mentioning: "yes or no")
        expectError("[check]\n\ndefault-probes = \(value)\n", line: 3, key: "default-probes")
    }

    @Test(arguments: ["100", "255", "65537", "128KiB", "4k", "4 KB", "lots"])
    func badBodyLimit(value: String) {
        expectError("[check]\nbody-limit = \(value)\n", line: 2, key: "body-limit")
    }

    @Test(arguments: [
        "ftp://files.example/x",
        "http://exa mple.net/",
        "http://user:secret@probe.example/",
        "http://user@probe.example/",
        "http://probe.example:0/",
        "http://probe.example:65536/",
        "http://probe.example:http/",
        "http://probe.example:/",
        "http://[2001:db8::zz]/",
        "http://[2001:db8::1/",
        "http://[fe80::1%25eth0]/",
        "http://-bad-.example/",
        "http:///path",
        "probe.example/generate_204",
    ])
    func badURL(value: String) {
        expectError("[probe bad]\nexpect-status = 204\nurl = \(value)\n", line: 3, key: "url", mentioning: "bad URL")
    }

    @Test func probeWithoutURLNamesItsSectionHeader() {
        expectError("[check]\ntimeout = 5s\n\n[probe nourl]\nexpect-status = 204\n[interface eth0]\nkind = ethernet\n",
                    line: 4, key: "url", mentioning: "nourl")
        expectError("[probe a]\nurl = http://a.example/\n[probe last]\nexpect-status = 204\n", line: 3, key: "url")
    }

    @Test func badProbeName() {
        expectError("[probe bad/name]\nurl = http://a.example/\n", line: 1, key: nil)
    }

    @Test(arguments: ["99", "600", "2O4", "204 OK", ""])
    func badExpectStatus(value: String) {
        expectError("[probe s]\nurl = http://s.example/\nexpect-status = \(value)\n", line: 3, key: "expect-status")
    }

    @Test(arguments: ["301", "302", "307", "511"])
    func portalEvidenceCannotBeExpected(value: String) {
        expectError("[probe s]\nurl = http://s.example/\nexpect-status = \(value)\n", line: 3, key: "expect-status",
                    mentioning: "captive-portal evidence")
    }

    @Test func badRegex() {
        expectError("[probe r]\nurl = http://r.example/\nexpect-regex = (unclosed\n", line: 3, key: "expect-regex",
                    mentioning: "invalid regular expression '(unclosed': missing closing parenthesis at offset 9")
    }

    /// With Swift Regex, 3,000 nested brackets crashed the regex parser (and a HUP
    /// with them killed the agent); now the pattern is refused like any bad value.
    @Test func hostileRegexesAreConfigurationErrors() {
        let deep = String(repeating: "[", count: 3_000)
        expectError("[probe r]\nurl = http://r.example/\nexpect-regex = \(deep)\n", line: 3, key: "expect-regex",
                    mentioning: "regular expression of 3000 bytes, longer than the 1024 allowed")
        let nested = String(repeating: "(", count: 65) + "x" + String(repeating: ")", count: 65)
        expectError("[probe r]\nurl = http://r.example/\nexpect-regex = \(nested)\n", line: 3, key: "expect-regex",
                    mentioning: "parentheses are too deeply nested")
    }

    @Test func emptyContainsIsRefused() {
        expectError("[probe c]\nurl = http://c.example/\nexpect-contains = \"\"\n", line: 3, key: "expect-contains")
    }

    @Test(arguments: ["bin/check", "./check", "check --flag", "/usr/../bin/check", ""])
    func badValidatorPath(value: String) {
        expectError("[probe v]\nurl = http://v.example/\nvalidator = \(value)\n", line: 3, key: "validator")
    }

    @Test(arguments: ["eth0:1", "a/b", "abcdefghijklmnop", "..", "."])
    func badInterfaceName(name: String) {
        expectError("[check]\n[interface \(name)]\nkind = ethernet\n", line: 2, key: nil)
    }

    @Test func unknownKind() {
        expectError("[interface eth0]\nkind = satellite\n", line: 2, key: "kind", mentioning: "satellite")
        expectError("[interface eth0]\nkind = WiFi\n", line: 2, key: "kind")
    }

    @Test func unterminatedQuote() {
        expectError("[probe q]\nurl = http://q.example/\nexpect-body = \"abc\n", line: 3, key: "expect-body", mentioning: "unterminated")
        expectError("[probe q]\nurl = http://q.example/\nexpect-body = \"\n", line: 3, key: "expect-body")
    }

    @Test func badEscapesInQuotes() {
        expectError("[probe q]\nurl = http://q.example/\nexpect-body = \"a\\qb\"\n", line: 3, key: "expect-body", mentioning: "escape")
        expectError("[probe q]\nurl = http://q.example/\nexpect-body = \"a\"b\"\n", line: 3, key: "expect-body")
    }

    @Test func noProbesLeft() {
        // Named where the key that decided was set.
        expectError("[check]\ndefault-probes = no\n", line: 2, key: "default-probes", mentioning: "no probes")
        let error = parseError("[check]\ndefault-probes = no\n")
        #expect(error?.description.hasPrefix("\(fileName):2: key 'default-probes': ") == true)
    }

    @Test func httpsOnlyWithHTTPProbes() throws {
        expectError("[check]\nhttps-only = yes\n", line: 2, key: "https-only", mentioning: "apple")
        expectError("[check]\nhttps-only = yes\ndefault-probes = no\n[probe s]\nurl = https://s.example/\n[probe p]\nurl = http://p.example/\n",
                    line: 2, key: "https-only", mentioning: "'p'")
        let ok = try parse("[check]\nhttps-only = true\ndefault-probes = false\n[probe s]\nurl = https://s.example/ok\n")
        #expect(ok.httpsOnly)
        #expect(ok.probes.map(\.url.description) == ["https://s.example/ok"])
    }

    @Test func badAuthorization() {
        expectError("[probe a]\nurl = http://a.example/\nauthorization = \"Bearer x\\nInjected: y\"\n", line: 3, key: "authorization")
    }
}
