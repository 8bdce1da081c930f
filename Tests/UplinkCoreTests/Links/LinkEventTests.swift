import Testing
import UplinkCore
import UplinkTestSupport

@Suite("LinkDiff and link events")
struct LinkEventTests {
    @Test func noChangeNoEvents() throws {
        let state = [5: link("eth0", index: 5, addresses: [address("10.0.0.2", 24)])]
        #expect(LinkDiff.events(from: state, to: state).isEmpty)
    }

    @Test func carrierLossIsDownAtOnce() throws {
        let before = link("eth0", index: 5, addresses: [address("10.0.0.2", 24)], routes: [defaultRoute(.ipv4, via: "10.0.0.1")])
        var after = before
        after.carrier = false
        let events = LinkDiff.events(from: [5: before], to: [5: after])
        #expect(events.map(\.name) == ["carrier-down"])
        #expect(events.first?.linkAssessment == Assessment(.down, reason: .noCarrier))
        let back = LinkDiff.events(from: [5: after], to: [5: before])
        #expect(back.map(\.name) == ["carrier-up"])
        #expect(back.first?.linkAssessment == Assessment(.unknown, reason: .needsProbe))
    }

    @Test func adminDown() throws {
        let before = link("wlan0", index: 3, addresses: [address("10.0.0.2", 24)], routes: [defaultRoute(.ipv4)])
        var after = before
        after.adminUp = false
        let events = LinkDiff.events(from: [3: before], to: [3: after])
        #expect(events.map(\.name) == ["admin-down"])
        #expect(events.first?.linkAssessment.reason == .adminDown)
    }

    @Test func lastUsableAddressLost() throws {
        let v4 = address("10.0.0.2", 24)
        let v6LinkLocal = address("fe80::1", 64)
        let before = link("eth0", index: 5, addresses: [v4, v6LinkLocal], routes: [defaultRoute(.ipv4)])
        var after = before
        after.addresses = [v6LinkLocal]
        let events = LinkDiff.events(from: [5: before], to: [5: after])
        #expect(events == [.addressRemoved(after, v4)])
        #expect(events.first?.linkAssessment == Assessment(.down, reason: .linkLocalOnly))
    }

    @Test func addressAndRouteChanges() throws {
        let a = address("10.0.0.2", 24), b = address("10.0.0.7", 24)
        let r1 = defaultRoute(.ipv4, via: "10.0.0.1", metric: 300), r2 = defaultRoute(.ipv4, via: "10.0.0.1", metric: 50)
        let before = link("eth0", index: 5, addresses: [a], routes: [r1])
        let after = link("eth0", index: 5, addresses: [a, b], routes: [r2])
        let events = LinkDiff.events(from: [5: before], to: [5: after])
        #expect(events == [.addressAdded(after, b), .defaultRouteAdded(after, r2), .defaultRouteRemoved(after, r1)])
    }

    @Test func renameKeepsIndex() throws {
        let before = link("wwan1", index: 9, adminUp: false, carrier: false)
        let after = link("wwan9", index: 9, adminUp: false, carrier: false)
        let events = LinkDiff.events(from: [9: before], to: [9: after])
        #expect(events == [.renamed(after, previousName: "wwan1")])
    }

    @Test func recreatedInterfaceIsDisappearedThenAppeared() throws {
        let old = link("wwan0", index: 7)
        let new = link("wwan0", index: 12)
        let events = LinkDiff.events(from: [7: old], to: [12: new])
        #expect(events == [.disappeared(old), .appeared(new)])
        #expect(events.first?.linkAssessment == Assessment(.down, reason: .noSuchInterface))
    }

    @Test func automaticUplinkSelection() throws {
        let routed = link("eth0", index: 2, routes: [defaultRoute(.ipv4)])
        #expect(UplinkSelection.automatic.isUplink(routed, kind: .ethernet))
        let plainEthernet = link("eth1", index: 3)
        #expect(!UplinkSelection.automatic.isUplink(plainEthernet, kind: .ethernet))
        let modem = link("wwan0", index: 4)
        #expect(UplinkSelection.automatic.isUplink(modem, kind: .wwan))
        let wifi = link("wlan0", index: 5)
        #expect(UplinkSelection.automatic.isUplink(wifi, kind: .wifi))
        let loopback = link("lo", index: 1, routes: [defaultRoute(.ipv4)], loopback: true)
        #expect(!UplinkSelection.automatic.isUplink(loopback, kind: .other))
        let bridge = link("br-lan", index: 6, type: "bridge")
        #expect(!UplinkSelection.automatic.isUplink(bridge, kind: .other))
        let vethNamedLikeModem = link("wwan5", index: 8, type: "veth")
        #expect(!UplinkSelection.automatic.isUplink(vethNamedLikeModem, kind: .wwan))
        let routedVeth = link("veth0", index: 10, routes: [defaultRoute(.ipv4)], type: "veth")
        #expect(UplinkSelection.automatic.isUplink(routedVeth, kind: .other))
    }

    @Test func listedUplinkSelection() throws {
        let selection = UplinkSelection.listed(["eth1"])
        #expect(selection.isUplink(link("eth1", index: 3), kind: .ethernet))
        #expect(!selection.isUplink(link("eth0", index: 2, routes: [defaultRoute(.ipv4)]), kind: .ethernet))
    }

    @Test func uplinksAndLinksSections() throws {
        let configuration = try ConfigurationParser(fileName: "t.conf").parse("""
            [uplinks]
            interfaces = eth0, wwan0 wlan0
            [links]
            receive-buffer = 4KiB
            """)
        #expect(configuration.uplinkSelection == .listed(["eth0", "wwan0", "wlan0"]))
        #expect(configuration.netlinkReceiveBufferBytes == 4_096)
        let automatic = try ConfigurationParser(fileName: "t.conf").parse("[uplinks]\ninterfaces = auto\n[links]\nreceive-buffer = 2MiB\n")
        #expect(automatic.uplinkSelection == .automatic)
        #expect(automatic.netlinkReceiveBufferBytes == 2 << 20)
    }

    @Test(arguments: [
        ("[uplinks]\ninterfaces = eth0 ../x\n", 2, "interfaces"),
        ("[uplinks]\nlist = eth0\n", 2, "list"),
        ("[links]\nreceive-buffer = 1\n", 2, "receive-buffer"),
        ("[links]\nreceive-buffer = 65MiB\n", 2, "receive-buffer"),
    ])
    func badLinkSettings(text: String, line: Int, key: String) {
        do {
            _ = try ConfigurationParser(fileName: "t.conf").parse(text)
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.line == line)
            #expect(error.key == key)
        }
    }

    @Test func eventJSONCarriesFactsAndVerdict() throws {
        let route = defaultRoute(.ipv4, via: "10.231.1.1", metric: 300)
        let facts = link("eth0", index: 5, addresses: [address("10.231.1.2", 24)])
        let json = LinkReport.json(.defaultRouteRemoved(facts, route), kind: .ethernet).serialized()
        #expect(json == #"{"event":"route-removed","interface":"eth0","index":5,"family":"ipv4","gateway":"10.231.1.1","metric":300,"table":254,"protocol":3,"verdict":"down","reason":"no-route"}"#)
    }
}
