import Testing
import UplinkCore
import UplinkTestSupport

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
