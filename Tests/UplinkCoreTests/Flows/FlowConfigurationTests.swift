import Testing
import UplinkCore
import UplinkTestSupport

/// `[flows]`, `[class NAME]` and the share keys of `[interface NAME]`: values, and
/// errors that name the file, line and key.
@Suite("Configuration: flows")
struct FlowConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> Configuration {
        try ConfigurationParser(fileName: "u.conf").parse(text)
    }

    private func error(_ text: String) -> ConfigurationError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func pinningIsOffByDefault() throws {
        let configuration = try parse("")
        #expect(!configuration.flows.pinning)
        #expect(configuration.flows.classes.isEmpty)
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try parse("""
            [flows]
            pinning = yes
            sticky = host
            [interface eth0]
            tier = 1
            weight = 3
            [interface wwan0]
            tier = 2
            spread = yes
            [class voip]
            protocol = udp
            ports = 5060, 10000-20000
            destination = 198.51.100.0/24 2001:db8::/32
            uplinks = eth0 wwan0
            never = wlan0
            """)
        #expect(configuration.flows.pinning)
        #expect(configuration.flows.sticky == .host)
        #expect(configuration.interfaces["eth0"]?.flow == UplinkFlowSettings(tier: 1, weight: 3))
        #expect(configuration.interfaces["wwan0"]?.flow == UplinkFlowSettings(tier: 2, spread: true))
        let voip = try #require(configuration.flows.classes.first)
        #expect(voip.name == "voip")
        #expect(voip.transport == .udp)
        #expect(voip.ports == [5060...5060, 10_000...20_000])
        #expect(voip.destinations.map(\.description) == ["198.51.100.0/24", "2001:db8::/32"])
        #expect(voip.uplinks == ["eth0", "wwan0"])
        #expect(voip.never == ["wlan0"])
    }

    @Test func badValuesNameTheirLineAndKey() {
        let ports = error("[class x]\nprotocol = tcp\nports = 0-70000\nuplinks = eth0\n")
        #expect(ports?.line == 3)
        #expect(ports?.key == "ports")
        let prefix = error("[class x]\ndestination = 10.0.0.1/8\nuplinks = eth0\n")
        #expect(prefix?.key == "destination")
        #expect(prefix?.message.contains("host bits") == true)
        #expect(error("[interface eth0]\nweight = 0\n")?.key == "weight")
        #expect(error("[flows]\nsticky = session\n")?.key == "sticky")
        #expect(error("[class x]\nuplinks = eth0 eth0\n")?.message.contains("named twice") == true)
    }

    @Test func aClassThatMatchesNothingOrGoesNowhereIsRefusedAtItsHeader() {
        let nothing = error("# classes\n[class x]\nuplinks = eth0\n")
        #expect(nothing?.line == 2)
        #expect(nothing?.message.contains("matches nothing") == true)
        #expect(error("[class x]\nprotocol = tcp\n")?.message.contains("uplinks names none") == true)
        #expect(error("[class x]\nports = 80\nuplinks = eth0\n")?.message.contains("need a protocol") == true)
        #expect(error("[class x]\nprotocol = tcp\nuplinks = eth0\nnever = eth0\n")?.message.contains("both") == true)
    }

    @Test func theFlowEntriesStayClearOfTheRouteHooks() {
        #expect(error("[flows]\npinning = yes\nrule-priority = 32480\n")?.key == "rule-priority")
        #expect(error("[flows]\npinning = yes\ntable-base = 7050\n")?.key == "table-base")
        #expect(error("[flows]\npinning = yes\nroute-protocol = 77\n")?.key == "route-protocol")
        // Without pinning the agent makes no such entries: nothing to clash.
        #expect(error("[agent]\nrule-priority = 20000\n") == nil)
    }
}
