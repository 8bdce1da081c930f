import Testing
import UplinkCore
import UplinkTestSupport

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
        #expect(configuration.interfaces["wwan0"]?.dnsServers == addresses("192.0.2.53", "2001:db8::53"))
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
            ("[interface eth0]\ndns = 0.0.0.0\n", "dns", "unspecified address, not one host"),
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
