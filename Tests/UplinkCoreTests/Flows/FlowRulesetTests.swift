import Testing
import UplinkCore
import UplinkTestSupport

/// The nftables script and the policy routes of a flow plan.
@Suite("FlowRuleset and FlowRoutes: a plan as the kernel gets it")
struct FlowRulesetTests {
    private func plan(sticky: FlowStickiness = .flow, classes: [FlowClass] = [], wlanUsable: Bool = true) -> FlowPlan {
        var settings = FlowSettings()
        settings.pinning = true
        settings.sticky = sticky
        settings.classes = classes
        var eth = InterfaceSettings(), wlan = InterfaceSettings()
        eth.flow = UplinkFlowSettings(tier: 1, weight: 3)
        wlan.flow = UplinkFlowSettings(tier: 1)
        return FlowPlan(settings: settings, interfaces: ["eth0": eth, "wlan0": wlan],
                        candidates: [FlowCandidate(name: "eth0", slot: 1, interfaceIndex: 7, usable: true, takesNewFlows: true, metered: false),
                                     FlowCandidate(name: "wlan0", slot: 2, interfaceIndex: 9, usable: wlanUsable,
                                                   takesNewFlows: wlanUsable, metered: false)],
                        primary: "eth0", inDoubt: false, successor: nil)
    }

    private func lines(_ script: String) -> [String] {
        script.split(separator: "\n").map { String($0.drop { $0 == "\t" || $0 == " " }) }
    }

    @Test func theScriptReplacesTheTableInOneTransaction() {
        let script = lines(FlowRuleset.script(plan()))
        #expect(Array(script.prefix(3)) == ["table inet uplinkd", "delete table inet uplinkd", "table inet uplinkd {"])
        #expect(script.last == "}")
    }

    @Test func weightsBecomeRangesOfARandomNumber() {
        let script = lines(FlowRuleset.script(plan()))
        #expect(script.contains("numgen random mod 4 vmap { 0-2 : goto mark_1, 3 : goto mark_2 }"))
        let sticky = lines(FlowRuleset.script(plan(sticky: .host)))
        // A fixed seed: the same host keeps its uplink when the table is made again.
        #expect(sticky.contains("meta nfproto ipv4 jhash ip saddr mod 4 seed 0x75706c6b vmap { 0-2 : goto mark_1, 3 : goto mark_2 }"))
        #expect(sticky.contains("meta nfproto ipv6 jhash ip6 saddr mod 4 seed 0x75706c6b vmap { 0-2 : goto mark_1, 3 : goto mark_2 }"))
    }

    @Test func onlyUsableUplinksGetTheirMarkBackAndUplinksAreMatchedByIndex() {
        let script = lines(FlowRuleset.script(plan(wlanUsable: false)))
        #expect(script.contains("meta mark and 0x1f000000 == 0 ct mark and 0x1f000000 vmap { 0x1000000 : goto mark_1 }"))
        #expect(script.contains("ct mark and 0x1f000000 != 0 ct mark set ct mark and 0xe0ffffff"))
        #expect(script.contains("oif vmap { 7 : goto record_1, 9 : goto record_2 }"))
        #expect(script.contains("meta mark set meta mark and 0xe0ffffff or 0x2000000"))
        #expect(script.contains("ct mark set ct mark and 0xe0ffffff or 0x1000000"))
    }

    @Test func aClassMatchesItsProtocolPortsAndPrefixesPerFamily() {
        var voip = FlowClass(name: "voip")
        voip.transport = .udp
        voip.ports = [5060...5060, 10_000...20_000]
        voip.destinations = [IPPrefix("198.51.100.0/24")!, IPPrefix("2001:db8::/32")!]
        voip.uplinks = ["wlan0"]
        let script = lines(FlowRuleset.script(plan(classes: [voip])))
        #expect(script.contains("ip daddr { 198.51.100.0/24 } meta l4proto udp th dport { 5060, 10000-20000 } goto class_1"))
        #expect(script.contains("ip6 daddr { 2001:db8::/32 } meta l4proto udp th dport { 5060, 10000-20000 } goto class_1"))
        let classStart = script.firstIndex(of: "chain class_1 {")!
        #expect(script[classStart + 1] == "goto mark_2")
    }

    @Test func routesCopyEachUplinksOwnDefaultAndRulesSendEachMarkToItsTable() {
        let links = [usableLink("eth0", index: 7), usableLink("wlan0", index: 9)]
        let routes = FlowRoutes(plan: plan(), settings: FlowSettings(), links: links)
        #expect(routes.rules.filter { $0.family == .ipv4 }.map(\.description) == [
            "-4 rule 32400: from all lookup main suppress_prefixlength 0 proto 78",
            "-4 rule 32401: from all fwmark 0x1000000/0x1f000000 lookup 7101 proto 78",
            "-4 rule 32402: from all fwmark 0x2000000/0x1f000000 lookup 7102 proto 78",
        ])
        #expect(routes.routes.map(\.table) == [7101, 7102])
        let commands = routes.commands(from: (rules: [], routes: []))
        #expect(commands[.ipv4]?.first?.hasPrefix("route replace default via ") == true)
        #expect(commands[.ipv4]?.contains("rule add pref 32401 fwmark 0x1000000/0x1f000000 lookup 7101 proto 78") == true)
        #expect(commands[.ipv6]?.contains("rule add pref 32400 lookup 254 suppress_prefixlength 0 proto 78") == true)
        // The kernel has exactly these: nothing to do.
        #expect(routes.commands(from: (rules: routes.rules, routes: routes.routes)).isEmpty)
    }

    @Test func aChangedGatewayIsReplacedInPlaceAndExtrasGo() {
        let links = [usableLink("eth0", index: 7), usableLink("wlan0", index: 9)]
        let routes = FlowRoutes(plan: plan(), settings: FlowSettings(), links: links)
        var stale = routes.routes
        stale[0].gateway = IPAddress("192.0.2.99")
        var extra = routes.rules
        extra.append(RoutingRule(family: .ipv4, priority: 32_405, table: 7_105, protocolNumber: 78, fwmark: 0x500_0000, fwmask: 0x1f00_0000))
        let commands = routes.commands(from: (rules: extra, routes: stale))[.ipv4] ?? []
        #expect(commands.count == 2)
        #expect(commands[0].hasPrefix("route replace default via"))
        #expect(commands[1] == "rule del pref 32405 fwmark 0x5000000/0x1f000000 lookup 7105 proto 78")
    }
}
