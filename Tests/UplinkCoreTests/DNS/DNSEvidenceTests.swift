import Testing
import UplinkCore
import UplinkTestSupport

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
