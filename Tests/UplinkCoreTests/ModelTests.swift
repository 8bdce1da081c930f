import Testing
import UplinkCore

@Suite("InterfaceName")
struct InterfaceNameTests {
    @Test(arguments: ["eth0", "wlan0", "wwan0", "e", "enp0s31f6", "wlx00c0ca123456", "abcdefghijklmno", "br-lan", "eth0.100", "...", "a_b"])
    func validNames(name: String) throws {
        let parsed = try #require(InterfaceName(name))
        #expect(parsed.value == name)
        #expect(parsed.description == name)
        #expect(InterfaceName.problem(with: name) == nil)
    }

    @Test(arguments: ["", ".", "..", "abcdefghijklmnop", "eth0/1", "eth0:1", "eth 0", "eth\t0", "eth0\n", " eth0", "eth\u{7f}"])
    func invalidNames(name: String) {
        #expect(InterfaceName(name) == nil)
        #expect(InterfaceName.problem(with: name) != nil)
    }

    @Test func lengthIsCountedInBytes() {
        #expect(InterfaceName.maximumBytes == 15)
        #expect(InterfaceName(String(repeating: "a", count: 15)) != nil)
        #expect(InterfaceName(String(repeating: "a", count: 16)) == nil)
    }

    @Test func problemMessagesEscapeUntrustedInput() {
        let message = InterfaceName.problem(with: "a\u{1b}b")
        #expect(message?.contains("a\\u{1b}b") == true)
        #expect("tab\there".printableEscaped == "tab\\u{9}here")
    }
}

@Suite("ProbeURL")
struct ProbeURLTests {
    @Test func parsesPlainHTTP() throws {
        let u = try url("http://connectivitycheck.gstatic.com/generate_204")
        #expect(u.scheme == .http)
        #expect(u.host == "connectivitycheck.gstatic.com")
        #expect(u.port == nil)
        #expect(u.effectivePort == 80)
        #expect(u.pathAndQuery == "/generate_204")
        #expect(!u.isIPv6Literal)
        #expect(u.description == "http://connectivitycheck.gstatic.com/generate_204")
    }

    @Test func normalisesSchemeAndHostCaseKeepsPathAndDropsFragment() throws {
        let u = try url("HTTPS://Probe.Example.NET:8443/Path/To?Q=Yes#section")
        #expect(u.scheme == .https)
        #expect(u.host == "probe.example.net")
        #expect(u.port == 8443)
        #expect(u.effectivePort == 8443)
        #expect(u.pathAndQuery == "/Path/To?Q=Yes")
        #expect(u.description == "https://probe.example.net:8443/Path/To?Q=Yes")
        #expect(try url("https://x.example").effectivePort == 443)
    }

    @Test func emptyPathBecomesSlash() throws {
        #expect(try url("http://probe.example").pathAndQuery == "/")
        #expect(try url("http://probe.example?x=1").pathAndQuery == "/?x=1")
        #expect(try url("http://probe.example?x=1").description == "http://probe.example/?x=1")
    }

    @Test(arguments: [
        "http://connectivitycheck.gstatic.com/generate_204",
        "https://probe.example:8443/a/b?c=d&e=f",
        "http://192.0.2.1/",
        "http://192.0.2.1:8080/x",
        "http://[2001:db8::1]/generate_204",
        "http://[2001:db8::1]:8080/x?y",
        "http://[::1]/",
        "http://fqdn.example./",
        "http://under_score.example/",
    ])
    func descriptionRoundTrips(text: String) throws {
        let u = try url(text)
        #expect(u.description == text)
        #expect(try url(u.description) == u)
    }

    @Test func ipv6LiteralWithBracketsAndPort() throws {
        let u = try url("http://[2001:DB8::A]:8080/generate_204")
        #expect(u.isIPv6Literal)
        #expect(u.host == "2001:db8::a")
        #expect(u.port == 8080)
        #expect(u.description == "http://[2001:db8::a]:8080/generate_204")
        let noPort = try url("http://[fe80::1]/x")
        #expect(noPort.port == nil)
        #expect(noPort.host == "fe80::1")
    }

    @Test(arguments: [
        "ftp://files.example/",
        "file:///etc/passwd",
        "//probe.example/",
        "http://exa mple.net/",
        "http://probe.example/a b",
        "http://probe.example/\u{e9}",
        "http://user@probe.example/",
        "http://user:pw@probe.example/",
        "http://probe.example:0/",
        "http://probe.example:65536/",
        "http://probe.example:-1/",
        "http://probe.example:8o/",
        "http://[2001:db8::1/",
        "http://[2001:db8::1]x/",
        "http://[2001:db8::g]/",
        "http://[1::2::3]/",
        "http://[fe80::1%eth0]/",
        "http://2001:db8::1/",
        "http://",
        "http://-lead.example/",
        "http://a..b/",
        "http://exa!mple/",
    ])
    func rejectsBadURLs(text: String) {
        #expect(throws: ProbeURLError.self) { try ProbeURL(parsing: text) }
    }

    @Test func credentialsErrorSaysWhy() {
        #expect {
            try ProbeURL(parsing: "http://user@probe.example/")
        } throws: { error in
            (error as? ProbeURLError)?.message.contains("credentials") == true
        }
    }

    @Test func resolvingReferences() throws {
        let base = try url("http://probe.example:8080/dir/page.html?q=1")
        #expect(base.resolving("https://portal.example/login") == "https://portal.example/login")
        #expect(base.resolving("HTTP://Portal.example/X") == "HTTP://Portal.example/X")
        #expect(base.resolving("//cdn.example/p") == "http://cdn.example/p")
        #expect(base.resolving("/login?a=b") == "http://probe.example:8080/login?a=b")
        #expect(base.resolving("login") == "http://probe.example:8080/dir/login")
        #expect(base.resolving("sub/login?x") == "http://probe.example:8080/dir/sub/login?x")
        #expect(base.resolving(" \t/padded  ") == "http://probe.example:8080/padded")

        let root = try url("https://probe.example")
        #expect(root.resolving("login") == "https://probe.example/login")

        let v6 = try url("http://[2001:db8::1]:81/a/b")
        #expect(v6.resolving("/portal") == "http://[2001:db8::1]:81/portal")
        #expect(v6.resolving("c") == "http://[2001:db8::1]:81/a/c")
    }
}

@Suite("trimmingWhitespace")
struct TrimmingTests {
    @Test func trimsSpacesTabsAndNewlines() {
        #expect("  a b\t".trimmingWhitespace == "a b")
        #expect("\n\nx\n".trimmingWhitespace == "x")
        #expect(" \t\r \n ".trimmingWhitespace == "")
        #expect("x\r".trimmingWhitespace == "x")
    }

    @Test("documented: CR and LF are trimmed, so a CRLF line end is too")
    func trimsCRLF() {
        // In Swift "\r\n" is one Character, equal to neither "\r" nor "\n".
        #expect("success\r\n".trimmingWhitespace == "success")
        #expect("\r\nvalue\r\n".trimmingWhitespace == "value")
        #expect(" \t\r\n ".trimmingWhitespace == "")
    }
}

@Suite("IPAddress")
struct IPAddressTests {
    @Test func parsesIPv4() throws {
        let a = try #require(IPAddress("192.0.2.33"))
        #expect(a.family == .ipv4)
        #expect(a.bytes == [192, 0, 2, 33])
        #expect(a.description == "192.0.2.33")
    }

    @Test(arguments: ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "1..2.3", "a.b.c.d", "1.2.3.4 ", "1234.1.1.1",
                      ":", ":::", "1::2::3", "12345::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "::g", "fe80::1%eth0",
                      "1:2:3:4:5:6:7::8:9", "::1.2.3", "[::1]"])
    func rejectsInvalid(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func parsesIPv6() throws {
        let a = try #require(IPAddress("2001:db8::1"))
        #expect(a.family == .ipv6)
        #expect(a.bytes == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
        let mapped = try #require(IPAddress("::ffff:192.0.2.1"))
        #expect(mapped.bytes == [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1])
        let full = try #require(IPAddress("1:2:3:4:5:6:7:8"))
        #expect(full.bytes == [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8])
    }

    @Test(arguments: [
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("2001:DB8::A", "2001:db8::a"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),      // equal runs: the first is compressed
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),            // the longest run is compressed
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),   // a single zero group is not
        ("::", "::"),
        ("::1", "::1"),
        ("1::", "1::"),
        ("fe80:0:0:0:0:0:0:1", "fe80::1"),
        ("0:0:0:0:0:0:0:0", "::"),
        ("1:0:0:0:0:0:0:0", "1::"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("2001:db8::", "2001:db8::"),
        ("0:1:0:1:0:1:0:1", "0:1:0:1:0:1:0:1"),
        ("abcd:ef01:2345:6789:abcd:ef01:2345:6789", "abcd:ef01:2345:6789:abcd:ef01:2345:6789"),
    ])
    func formatsIPv6PerRFC5952(input: String, expected: String) throws {
        let a = try #require(IPAddress(input))
        #expect(a.description == expected)
        #expect(IPAddress(expected) == a)
    }

    @Test func initFromBytesChecksLength() {
        #expect(IPAddress(family: .ipv4, bytes: [10, 0, 0, 1])?.description == "10.0.0.1")
        #expect(IPAddress(family: .ipv4, bytes: [10, 0, 0]) == nil)
        #expect(IPAddress(family: .ipv6, bytes: [10, 0, 0, 1]) == nil)
        #expect(IPAddress(family: .ipv6, bytes: [UInt8](repeating: 0, count: 16))?.description == "::")
    }

    @Test(arguments: [
        ("169.254.0.1", true), ("169.254.255.255", true), ("169.253.1.1", false), ("170.254.1.1", false),
        ("fe80::1", true), ("febf::1", true), ("fec0::1", false), ("fe7f::1", false), ("2001:db8::1", false),
        ("10.0.0.1", false),
    ])
    func linkLocal(text: String, expected: Bool) throws {
        #expect(try #require(IPAddress(text)).isLinkLocal == expected)
    }

    @Test(arguments: [
        ("10.1.2.3", true), ("172.16.0.1", true), ("172.31.255.255", true), ("172.15.0.1", false), ("172.32.0.1", false),
        ("192.168.1.1", true), ("192.169.1.1", false), ("100.64.0.1", true), ("100.127.255.255", true),
        ("100.63.0.1", false), ("100.128.0.1", false), ("8.8.8.8", false),
        ("fd12:3456::1", true), ("fc00::1", true), ("fe80::1", false), ("2001:db8::1", false),
    ])
    func privateRanges(text: String, expected: Bool) throws {
        #expect(try #require(IPAddress(text)).isPrivate == expected)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("128.0.0.1", false), ("::1", true), ("::2", false), ("::", false),
        ("1::1", false),
    ])
    func loopback(text: String, expected: Bool) throws {
        #expect(try #require(IPAddress(text)).isLoopback == expected)
    }
}

@Suite("JSONValue")
struct JSONValueTests {
    @Test func escapesStrings() {
        #expect(JSONValue.string("plain").serialized() == #""plain""#)
        #expect(JSONValue.string("say \"hi\"").serialized() == #""say \"hi\"""#)
        #expect(JSONValue.string(#"C:\dir"#).serialized() == #""C:\\dir""#)
        #expect(JSONValue.string("a\nb\rc\td").serialized() == #""a\nb\rc\td""#)
        #expect(JSONValue.string("\u{0}\u{1}\u{8}\u{c}\u{1b}\u{1f}").serialized() == #""\u0000\u0001\u0008\u000c\u001b\u001f""#)
        #expect(JSONValue.string("\u{7f}").serialized() == #""\u007f""#)
        #expect(JSONValue.string(" ~/é✓").serialized() == "\" ~/é✓\"")
    }

    @Test func serializesScalarsArraysAndObjectsInOrder() {
        #expect(JSONValue.null.serialized() == "null")
        #expect(JSONValue.bool(true).serialized() == "true")
        #expect(JSONValue.bool(false).serialized() == "false")
        #expect(JSONValue.int(-42).serialized() == "-42")
        #expect(JSONValue.optional(nil).serialized() == "null")
        #expect(JSONValue.optional("x").serialized() == #""x""#)
        #expect(JSONValue.array([]).serialized() == "[]")
        #expect(JSONValue.object([]).serialized() == "{}")
        let value = JSONValue.object([
            ("z", .int(1)),
            ("a\"key", .array([.null, .bool(true), .string("s")])),
            ("nested", .object([("k", .int(0))])),
        ])
        #expect(value.serialized() == #"{"z":1,"a\"key":[null,true,"s"],"nested":{"k":0}}"#)
    }
}

@Suite("Verdict and exit status")
struct VerdictTests {
    @Test func orderedWorstToBest() {
        #expect(Verdict.unknown < .down)
        #expect(Verdict.down < .limited)
        #expect(Verdict.limited < .captive)
        #expect(Verdict.captive < .online)
        #expect(!(Verdict.online < .online))
        #expect(Verdict.allCases.sorted() == [.unknown, .down, .limited, .captive, .online])
        #expect([Verdict.limited, .online, .down].max() == .online)
        #expect([Verdict.limited, .captive, .down].max() == .captive)
    }

    @Test func exitStatuses() {
        #expect(Verdict.online.exitStatus == 0)
        #expect(Verdict.captive.exitStatus == 1)
        #expect(Verdict.limited.exitStatus == 2)
        #expect(Verdict.down.exitStatus == 3)
        #expect(Verdict.unknown.exitStatus == 3)
    }

    @Test func rawValuesAreTheContract() {
        #expect(Verdict.allCases.map(\.rawValue) == ["unknown", "down", "limited", "captive", "online"])
        #expect(InterfaceKind.allCases.map(\.rawValue) == ["ethernet", "wifi", "wwan", "other"])
    }
}

@Suite("CheckPlanner and CheckReport")
struct CheckPlanTests {
    func report(_ verdict: Verdict) -> CheckReport {
        CheckReport(interface: "eth0", kind: .ethernet, assessment: Assessment(verdict, reason: "r"), elapsedMilliseconds: 1)
    }

    @Test func exitStatusIsTheHighest() {
        #expect(CheckPlanner.exitStatus(for: [report(.online), report(.captive), report(.limited)]) == 2)
        #expect(CheckPlanner.exitStatus(for: [report(.online), report(.down), report(.captive)]) == 3)
        #expect(CheckPlanner.exitStatus(for: [report(.online), report(.online)]) == 0)
        #expect(CheckPlanner.exitStatus(for: [report(.captive)]) == 1)
        #expect(CheckPlanner.exitStatus(for: [report(.unknown), report(.online)]) == 3)
        #expect(CheckPlanner.exitStatus(for: []) == 0)
    }

    @Test func requestsSkipFamiliesThatDoNotMatchAnIPLiteral() throws {
        let name = try #require(InterfaceName("wlan0"))
        let v4 = try probe("http://192.0.2.1/generate_204", name: "v4")
        let v6 = try probe("http://[2001:db8::1]/generate_204", name: "v6")
        let host = try probe("http://probe.example/generate_204", name: "host")
        let requests = CheckPlanner.requests(for: name, link: .probe([.ipv4, .ipv6]), probes: [v4, v6, host])
        #expect(requests.map { "\($0.family.rawValue):\($0.probe.name)" } == ["ipv4:v4", "ipv4:host", "ipv6:v6", "ipv6:host"])
        #expect(requests.allSatisfy { $0.interface == name })

        let v6Only = CheckPlanner.requests(for: name, link: .probe([.ipv6]), probes: [v4, host])
        #expect(v6Only.map(\.probe.name) == ["host"])
        #expect(v6Only.map(\.family) == [.ipv6])
    }

    @Test func noRequestsWhenDown() throws {
        let name = try #require(InterfaceName("eth0"))
        let host = try probe("http://probe.example/")
        #expect(CheckPlanner.requests(for: name, link: .down(reason: "no-carrier"), probes: [host]).isEmpty)
    }

    @Test func reportForDownLink() throws {
        let name = try #require(InterfaceName("eth0"))
        let r = CheckPlanner.report(interface: name, kind: .ethernet, link: .down(reason: "no-carrier"), results: [],
                                    thresholdPercent: 50, elapsedMilliseconds: 3)
        #expect(r.assessment == Assessment(.down, reason: "no-carrier"))
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
        let r = CheckPlanner.report(interface: name, kind: .wifi, link: .probe([.ipv4, .ipv6]), results: results,
                                    thresholdPercent: 50, elapsedMilliseconds: 12)
        #expect(r.assessment == Assessment(.online, reason: "validated"))
        #expect(r.families[.ipv4] == Assessment(.captive, reason: "redirect", portalURL: "http://portal.example/"))
        #expect(r.families[.ipv6] == Assessment(.online, reason: "validated"))
        #expect(r.probes.map(\.family) == [.ipv4, .ipv6])
        #expect(r.probes.map(\.status) == [302, 204])
        #expect(r.humanLine == "wlan0: online (wifi, validated) [ipv4 captive, ipv6 online] in 12 ms")
    }

    @Test func familyWithoutResultsIsLimited() throws {
        let name = try #require(InterfaceName("wlan0"))
        let r = CheckPlanner.report(interface: name, kind: .wifi, link: .probe([.ipv6]), results: [],
                                    thresholdPercent: 50, elapsedMilliseconds: 1)
        #expect(r.assessment == Assessment(.limited, reason: "no-probe-for-family"))
    }

    @Test func jsonHasTheContractKeysAndNoSecret() throws {
        let secret = "Bearer s3cr3t-T0KEN"
        let name = try #require(InterfaceName("wlan0"))
        let p = try probe("http://probe.example/generate_204", name: "corp", authorization: secret)
        let request = ProbeRequest(interface: name, family: .ipv4, probe: p)
        let results = [ProbeResult(request: request, outcome: response(302, location: "/login"), elapsedMilliseconds: 9, bytes: 321)]
        let r = CheckPlanner.report(interface: name, kind: .wifi, link: .probe([.ipv4]), results: results,
                                    thresholdPercent: 50, elapsedMilliseconds: 15)
        let json = r.json
        guard case .object(let members) = json else {
            Issue.record("report JSON is not an object")
            return
        }
        #expect(members.map(\.0) == ["interface", "kind", "verdict", "reason", "portal_url", "elapsed_ms", "families", "dns", "probes"])
        let text = json.serialized()
        #expect(text.hasPrefix(#"{"interface":"wlan0","kind":"wifi","verdict":"captive","reason":"redirect","portal_url":"http://probe.example/login","elapsed_ms":15,"families":{"ipv4":{"verdict":"captive","reason":"redirect","portal_url":"http://probe.example/login"}},"dns":null,"probes":["#))
        #expect(text.contains(#"{"name":"corp","url":"http://probe.example/generate_204","family":"ipv4","result":"redirect","status":302,"elapsed_ms":9,"bytes":321,"addresses":[]}"#))
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("Bearer"))
        #expect(!r.humanLine.contains("s3cr3t"))
    }

    @Test func jsonPortalURLIsNullWhenNotCaptive() {
        let r = CheckReport(interface: "eth0", kind: .ethernet, assessment: Assessment(.limited, reason: "timeout"),
                            elapsedMilliseconds: 2)
        #expect(r.json.serialized() == #"{"interface":"eth0","kind":"ethernet","verdict":"limited","reason":"timeout","portal_url":null,"elapsed_ms":2,"families":{},"dns":null,"probes":[]}"#)
    }
}
