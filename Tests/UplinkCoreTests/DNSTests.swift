import Testing
import UplinkCore

private func addresses(_ texts: String...) -> [IPAddress] { texts.map { IPAddress($0)! } }

@Suite("DNS server files")
struct DNSFileParserTests {
    @Test func networkdAndResolvedLinkState() {
        let networkd = """
            # This is private data. Do not parse.
            ADMIN_STATE=configured
            OPER_STATE=routable
            DNS=192.0.2.53 2001:db8::53 fe80::1%3
            NTP=
            """
        #expect(DNSFileParsers.networkdLinkState(networkd) == addresses("192.0.2.53", "2001:db8::53", "fe80::1"))
        let resolved = "SCOPES=DNS\nSERVERS=198.51.100.1:53#dns.example 198.51.100.2:5353 [2001:db8::9]:53%3 [2001:db8::8]:5353\nDOMAINS=lan\n"
        // Queries go to port 53: servers on other ports are left out.
        #expect(DNSFileParsers.resolvedLinkState(resolved) == addresses("198.51.100.1", "2001:db8::9"))
    }

    @Test func dhclientTakesTheLastLeaseOfTheInterfacePerFamily() {
        let leases = """
            lease {
              interface "eth0";
              fixed-address 10.0.0.5;
              option domain-name-servers 10.0.0.1, 10.0.0.2;
              renew 4 2026/11/19 10:00:00;
            }
            lease {
              interface "wlan0";
              option domain-name-servers 172.16.0.1;
            }
            lease {
              interface "eth0";
              option domain-name-servers 10.0.0.9;
              option routers 10.0.0.1;
            }
            default-duid "\\000\\001";
            lease6 {
              interface "eth0";
              ia-na 1a:2b:3c:4d {
                iaaddr 2001:db8::100 { preferred-life 300; }
              }
              option dhcp6.name-servers 2001:db8::1,2001:db8::2;
            }
            """
        #expect(DNSFileParsers.dhclientLeases(leases, interface: "eth0") == addresses("10.0.0.9", "2001:db8::1", "2001:db8::2"))
        #expect(DNSFileParsers.dhclientLeases(leases, interface: "wlan0") == addresses("172.16.0.1"))
        #expect(DNSFileParsers.dhclientLeases(leases, interface: "wwan0").isEmpty)
        // A lease file cut in the middle (the adapter reads its tail) yields what is whole.
        #expect(DNSFileParsers.dhclientLeases("  option domain-name-servers 1.1.1.1;\n}\n", interface: "eth0").isEmpty)
        // Braces inside quoted values do not end the block.
        let quoted = "lease {\n  interface \"eth0\";\n  option domain-search \"a}b\";\n  option domain-name-servers 10.7.0.1;\n}\n"
        #expect(DNSFileParsers.dhclientLeases(quoted, interface: "eth0") == addresses("10.7.0.1"))
    }

    @Test func resolvConfAndResolvconfFiles() {
        let text = "# generated\ndomain lan\nnameserver 192.0.2.1\nnameserver\tfe80::1%eth0\nnameserver bogus\nnameserver 0.0.0.0\n"
        #expect(DNSFileParsers.resolvConf(text) == addresses("192.0.2.1", "fe80::1"))
    }

    @Test func systemdLeaseOfNetworkManager() {
        #expect(DNSFileParsers.systemdLease("ADDRESS=10.1.1.5\nDNS=10.1.1.1 10.1.1.2\n") == addresses("10.1.1.1", "10.1.1.2"))
    }

    @Test func hostileContentYieldsNothing() {
        #expect(DNSFileParsers.networkdLinkState("DNS=\u{0}\u{ff} [ ]:53 ::: 999.1.1.1").isEmpty)
        #expect(DNSFileParsers.dhclientLeases(String(repeating: "{", count: 10_000), interface: "eth0").isEmpty)
        #expect(DNSFileParsers.dhclientLeases(String(repeating: "}", count: 10_000), interface: "eth0").isEmpty)
    }
}

@Suite("DNS as evidence")
struct DNSEvidenceTests {
    @Test func privateAnswersForAPublicNameAreAHijack() {
        for answer in ["10.1.2.3", "172.20.0.1", "192.168.1.1", "100.64.0.1", "169.254.1.1", "127.0.0.1", "0.0.0.0",
                       "fd00::1", "fe80::1", "::1", "::", "::ffff:192.168.1.1"] {
            let family: AddressFamily = answer.contains(":") ? .ipv6 : .ipv4
            #expect(DNSEvidence.judge(addresses(answer), family: family, hijackCheck: true) == .hijacked(addresses(answer)), "\(answer)")
        }
        #expect(DNSEvidence.judge(addresses("10.1.2.3"), family: .ipv4, hijackCheck: false) == .pin(addresses("10.1.2.3")))
    }

    @Test func publicAnswersArePinnedAndMixedOnesKeepOnlyThePublic() {
        #expect(DNSEvidence.judge(addresses("2001:db8::80", "2001:db8::81"), family: .ipv6, hijackCheck: true)
                == .pin(addresses("2001:db8::80", "2001:db8::81")))
        #expect(DNSEvidence.judge(addresses("10.0.0.1", "203.0.113.80"), family: .ipv4, hijackCheck: true) == .pin(addresses("203.0.113.80")))
        // An IPv4-mapped AAAA answer would be carried over IPv4: never pinned for IPv6.
        #expect(DNSEvidence.judge(addresses("::ffff:203.0.113.80", "2001:db8::80"), family: .ipv6, hijackCheck: true)
                == .pin(addresses("2001:db8::80")))
        #expect(DNSEvidence.judge(addresses("::ffff:203.0.113.80"), family: .ipv6, hijackCheck: false) == .pin([]))
    }

    @Test func knownAnswer() {
        let known = KnownAnswer(name: "check.example", addresses: addresses("192.0.2.10", "2001:db8::10"))
        #expect(known.families == [.ipv4, .ipv6])
        #expect(KnownAnswerResult.judge(addresses("198.51.100.1", "192.0.2.10"), expected: known) == .matched)
        #expect(KnownAnswerResult.judge(addresses("198.51.100.1"), expected: known) == .mismatch(addresses("198.51.100.1")))
    }

    @Test func serversOfTheAskedFamilyComeFirst() {
        let servers = DNSServers(source: .dhclient, addresses: addresses("192.0.2.1", "2001:db8::1", "192.0.2.2"))
        #expect(servers.ordered(for: .ipv6) == addresses("2001:db8::1", "192.0.2.1", "192.0.2.2"))
        #expect(servers.ordered(for: .ipv4) == addresses("192.0.2.1", "192.0.2.2", "2001:db8::1"))
        #expect(servers.isPerUplink)
        #expect(!DNSServers(source: .resolvConf, addresses: []).isPerUplink)
        #expect(!DNSServers.none.isPerUplink)
    }
}

@Suite("DNS in verdicts")
struct DNSVerdictTests {
    let eth0 = InterfaceName("eth0")!

    func result(_ family: AddressFamily, _ outcome: ProbeOutcome, url: String = "http://probe.example/gen") throws -> ProbeResult {
        ProbeResult(request: ProbeRequest(interface: eth0, family: family, probe: try probe(url)), outcome: outcome,
                    elapsedMilliseconds: 5, bytes: 100)
    }

    @Test func aHijackedNameIsCaptiveWithTheProbeURL() throws {
        let report = CheckPlanner.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4]),
            results: [try result(.ipv4, .dnsHijack(addresses("10.0.0.1")))], thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment.verdict == .captive)
        #expect(report.assessment.reason == "dns-hijack")
        #expect(report.assessment.portalURL == "http://probe.example/gen")
    }

    @Test func noAnswerIsLimitedDNSFailed() throws {
        let report = CheckPlanner.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4]),
            results: [try result(.ipv4, .failure(.dnsFailed))], thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment == Assessment(.limited, reason: "dns-failed"))
    }

    @Test func eachFamilyIsJudgedAndTheBestWins() throws {
        let report = CheckPlanner.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4, .ipv6]),
            results: [try result(.ipv4, .response(ProbeResponse(status: 204))), try result(.ipv6, .failure(.timeout))],
            thresholdPercent: 50, elapsedMilliseconds: 9,
            dns: DNSServers(source: .dhclient, addresses: addresses("10.0.0.1")))
        #expect(report.assessment.verdict == .online)
        #expect(report.families[.ipv4]?.verdict == .online)
        #expect(report.families[.ipv6] == Assessment(.limited, reason: "timeout"))
        let json = report.json.serialized()
        #expect(json.contains(#""dns":{"source":"dhclient","per_uplink":true,"servers":["10.0.0.1"]}"#))
        #expect(json.contains(#""ipv6":{"verdict":"limited","reason":"timeout""#))
    }

    @Test func anIPv6OnlyUplinkWithInternetIsOnline() throws {
        let report = CheckPlanner.report(
            interface: eth0, kind: .wwan, link: .probe([.ipv6]),
            results: [try result(.ipv6, .response(ProbeResponse(status: 204)))], thresholdPercent: 50, elapsedMilliseconds: 9)
        #expect(report.assessment.verdict == .online)
        #expect(report.families[.ipv4] == nil)
    }

    @Test func aLyingResolverVetoesItsFamily() throws {
        let report = CheckPlanner.report(
            interface: eth0, kind: .ethernet, link: .probe([.ipv4, .ipv6]),
            results: [try result(.ipv4, .response(ProbeResponse(status: 204))),
                      try result(.ipv6, .response(ProbeResponse(status: 204)))],
            thresholdPercent: 50, elapsedMilliseconds: 9,
            knownAnswers: [.ipv4: .mismatch(addresses("198.51.100.7")), .ipv6: .unanswered])
        #expect(report.families[.ipv4] == Assessment(.captive, reason: "dns-hijack"))
        #expect(report.families[.ipv6]?.verdict == .online)
        #expect(report.assessment.verdict == .online)
    }

    @Test func namesNeedResolutionAndLiteralsDoNot() throws {
        #expect(ProbeRequest(interface: eth0, family: .ipv4, probe: try probe("http://probe.example/")).hostNeedingResolution == "probe.example")
        #expect(ProbeRequest(interface: eth0, family: .ipv4, probe: try probe("http://192.0.2.1/")).hostNeedingResolution == nil)
        #expect(ProbeRequest(interface: eth0, family: .ipv6, probe: try probe("http://[2001:db8::1]/")).hostNeedingResolution == nil)
    }
}

@Suite("DNS configuration")
struct DNSConfigurationTests {
    @Test func dnsSectionAndPerInterfaceServers() throws {
        let configuration = try ConfigurationParser(fileName: "d.conf").parse("""
            [dns]
            sources = dhclient, resolvconf configured
            dhclient-leases = /var/lib/dhcp, /run/dhcp
            resolvconf-dir = /run/resolvconf/interface
            resolv-conf = /etc/resolv.conf
            timeout = 1500ms
            hijack-check = no
            known-answer = check.example.net 192.0.2.10, 2001:db8::10
            [interface wwan0]
            dns = 192.0.2.53 2001:db8::53
            """)
        let dns = configuration.dns
        #expect(dns.sources == [.dhclient, .resolvconf, .configured])
        #expect(dns.dhclientLeaseDirectories == ["/var/lib/dhcp", "/run/dhcp"])
        #expect(dns.timeoutMilliseconds == 1_500)
        #expect(!dns.hijackCheck)
        #expect(dns.knownAnswer == KnownAnswer(name: "check.example.net", addresses: addresses("192.0.2.10", "2001:db8::10")))
        #expect(dns.configuredServers["wwan0"] == addresses("192.0.2.53", "2001:db8::53"))
    }

    @Test func defaultsUseEverySourceInOrder() throws {
        let dns = try ConfigurationParser(fileName: "d.conf").parse("").dns
        #expect(dns.sources == Set(DNSSource.allCases))
        #expect(DNSSource.allCases.map(\.rawValue) == ["configured", "networkd", "networkmanager", "dhclient", "resolvconf", "resolv.conf"])
        #expect(dns.hijackCheck)
        #expect(dns.knownAnswer == nil)
    }

    @Test func mistakesNameLineAndKey() {
        let cases: [(String, String, String)] = [
            ("[dns]\nsources = dhcp\n", "sources", "unknown source 'dhcp'"),
            ("[dns]\nsources = ,\n", "sources", "at least one"),
            ("[dns]\ndhclient-leases = var/lib\n", "dhclient-leases", "absolute path"),
            ("[dns]\nknown-answer = 192.0.2.1\n", "known-answer", "NAME ADDRESS"),
            ("[dns]\nknown-answer = name..example 192.0.2.1\n", "known-answer", "NAME ADDRESS"),
            ("[dns]\nknown-answer = ok.example not-an-address\n", "known-answer", "not an IPv4 or IPv6 address"),
            ("[dns]\ntimeout = 10ms\n", "timeout", ""),
            ("[dns]\ncolour = blue\n", "colour", "unknown key in [dns]"),
            ("[interface eth0]\ndns = 0.0.0.0\n", "dns", "not an IPv4 or IPv6 address"),
            ("[interface eth0]\ndns =\n", "dns", "expected 1 to 8"),
        ]
        for (text, key, mentioning) in cases {
            do {
                _ = try ConfigurationParser(fileName: "d.conf").parse(text)
                Issue.record("no error for \(text.debugDescription)")
            } catch {
                #expect(error.line == 2, "\(error)")
                #expect(error.key == key, "\(error)")
                #expect(error.message.contains(mentioning), "\(error)")
            }
        }
    }
}

@Suite("DNS through a local cache")
struct LocalCacheTests {
    @Test func loopbackServersAreAskedUnboundAndDroppedWhenBound() {
        let stub = DNSServers(source: .resolvConf, addresses: [IPAddress("127.0.0.53")!])
        #expect(!stub.bindsToInterface)
        #expect(stub.ordered(for: .ipv4) == [IPAddress("127.0.0.53")!])
        let mixed = DNSServers(source: .resolvConf, addresses: [IPAddress("127.0.0.1")!, IPAddress("192.0.2.1")!])
        #expect(mixed.bindsToInterface)
        #expect(mixed.ordered(for: .ipv4) == [IPAddress("192.0.2.1")!])
    }
}
