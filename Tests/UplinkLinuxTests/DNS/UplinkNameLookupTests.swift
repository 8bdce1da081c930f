import Testing
import UplinkCore
import UplinkLinux

/// `uplinkd resolve`'s adapter: the servers are the ones a probe round would ask, and
/// a lookup with none ends at once with every family's failure (nothing is sent).
@Suite("Name lookup through one uplink")
struct UplinkNameLookupTests {
    @Test func serversAreTheProbesOwnConfiguredFirstAndSourcesRespected() {
        var configuration = Configuration()
        configuration.dns.resolvConfPath = "/nonexistent/resolv.conf"
        configuration.dns.sources = [.configured]
        let wlan0 = InterfaceName("wlan0")
        configuration.interfaces[wlan0] = InterfaceSettings(dnsServers: [IPAddress("10.231.2.1")!])
        let lookup = UplinkNameLookup(configuration: configuration)
        let servers = lookup.servers(for: wlan0, index: 3)
        #expect(servers.source == .configured)
        #expect(servers.addresses == [IPAddress("10.231.2.1")!])
        #expect(servers.isPerUplink)
        #expect(lookup.servers(for: InterfaceName("eth0"), index: 2) == .none)
    }

    @Test func noServersFailEveryFamilyAtOnce() throws {
        let lookup = UplinkNameLookup(configuration: Configuration())
        let answers = try lookup.resolve("portal.example", families: AddressFamily.allCases,
                                         interface: InterfaceName("wlan0"), servers: .none)
        #expect(Set(answers.keys) == Set(AddressFamily.allCases))
        for answer in answers.values {
            guard case .failure(let failure) = answer else {
                Issue.record("an answer without servers: \(answer)")
                continue
            }
            #expect(failure.kind == .noServers)
        }
    }

    @Test func noInterfaceHasIndexZero() {
        #expect(UplinkNameLookup.index(of: InterfaceName("nosuch-uplink0")) == 0)
        #expect(UplinkNameLookup.index(of: InterfaceName("lo")) > 0)
    }
}
