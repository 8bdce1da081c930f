import Testing
import UplinkCore
import UplinkTestSupport

@Suite("UplinkSelection: which interfaces are uplinks")
struct UplinkSelectionTests {
    @Test func aWifiPortOfABridgeIsNoUplink() {
        // An access point's radio inside br-lan: kind wifi, but its traffic is the bridge's.
        var radio = LinkFacts(name: "wlan1", index: 7, adminUp: true, carrier: true, addresses: [], defaultRoutes: [])
        #expect(UplinkSelection.automatic.isUplink(radio, kind: .wifi))
        radio.masterIndex = 4
        #expect(!UplinkSelection.automatic.isUplink(radio, kind: .wifi))
        #expect(!UplinkSelection.automatic.isUplink(radio, kind: .wwan))
    }

    @Test func namingItStillMakesItOne() {
        var port = LinkFacts(name: "wlan1", index: 7, adminUp: true, carrier: true, addresses: [], defaultRoutes: [])
        port.masterIndex = 4
        #expect(UplinkSelection.listed(["wlan1"]).isUplink(port, kind: .wifi))
    }
}
