import Testing
import UplinkCore
import UplinkTestSupport

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
        #expect(dhclientServers(leases, interface: "eth0") == addresses("10.0.0.9", "2001:db8::1", "2001:db8::2"))
        #expect(dhclientServers(leases, interface: "wlan0") == addresses("172.16.0.1"))
        #expect(dhclientServers(leases, interface: "wwan0").isEmpty)
        // A lease file cut in the middle (the adapter reads its tail) yields what is whole.
        #expect(dhclientServers("  option domain-name-servers 1.1.1.1;\n}\n", interface: "eth0").isEmpty)
        // Braces inside quoted values do not end the block.
        let quoted = "lease {\n  interface \"eth0\";\n  option domain-search \"a}b\";\n  option domain-name-servers 10.7.0.1;\n}\n"
        #expect(dhclientServers(quoted, interface: "eth0") == addresses("10.7.0.1"))
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
        #expect(dhclientServers(String(repeating: "{", count: 10_000), interface: "eth0").isEmpty)
        #expect(dhclientServers(String(repeating: "}", count: 10_000), interface: "eth0").isEmpty)
    }

    /// Both families' servers of an interface's last leases, DHCPv4 first.
    private func dhclientServers(_ text: String, interface: String) -> [IPAddress] {
        let servers = DNSFileParsers.dhclientLeaseServers(text, interface: interface)
        return servers.dhcp4 + servers.dhcp6
    }
}
