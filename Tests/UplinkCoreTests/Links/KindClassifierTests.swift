import Testing
import UplinkCore
import UplinkTestSupport

@Suite("KindClassifier")
struct KindClassifierTests {
    func classify(_ name: InterfaceName, _ evidence: KindEvidence?, configured: InterfaceKind? = nil) -> InterfaceKind {
        KindClassifier.classify(name: name, evidence: evidence, configured: configured)
    }

    @Test func configuredKindWins() {
        let wlan = KindEvidence(devType: "wlan", hasWirelessDirectory: true, hardwareType: 1, hasDevice: true)
        #expect(classify("wlan0", wlan, configured: .wwan) == .wwan)
        #expect(classify("eth0", KindEvidence(hardwareType: 1, hasDevice: true), configured: .other) == .other)
        #expect(classify("nothing", nil, configured: .ethernet) == .ethernet)
    }

    @Test func devTypeWlanAndWwan() {
        // Names chosen so that the name fallback would say something else.
        #expect(classify("eth5", KindEvidence(devType: "wlan", hardwareType: 1, hasDevice: true)) == .wifi)
        #expect(classify("eth6", KindEvidence(devType: "wwan", hardwareType: 1, hasDevice: true)) == .wwan)
        #expect(KindClassifier.fromSysfs(KindEvidence(devType: "wlan")) == .wifi)
        #expect(KindClassifier.fromSysfs(KindEvidence(devType: "wwan")) == .wwan)
    }

    @Test func wirelessDirectoryIsWifi() {
        #expect(classify("radio0", KindEvidence(hasWirelessDirectory: true, hardwareType: 1, hasDevice: true)) == .wifi)
    }

    @Test func wwanSubsystem() {
        #expect(classify("mhi0", KindEvidence(inWWANSubsystem: true, hardwareType: 519, hasDevice: true)) == .wwan)
        #expect(classify("eth7", KindEvidence(inWWANSubsystem: true, hardwareType: 1, hasDevice: true)) == .wwan)
    }

    @Test(arguments: ["qmi_wwan", "cdc_mbim", "huawei_cdc_ncm", "mhi_net"])
    func wwanDriver(driver: String) {
        #expect(classify("usb0", KindEvidence(driver: driver, hardwareType: 1, hasDevice: true)) == .wwan)
    }

    @Test func ordinaryEthernetDriverIsEthernet() {
        #expect(classify("usb0", KindEvidence(driver: "cdc_ether", hardwareType: 1, hasDevice: true)) == .ethernet)
        #expect(classify("lan1", KindEvidence(driver: "e1000e", hardwareType: 1, hasDevice: true)) == .ethernet)
    }

    @Test(arguments: [512, 519, 65534])
    func cellularHardwareTypes(type: Int) {
        #expect(classify("ppp0", KindEvidence(hardwareType: type)) == .wwan)
        #expect(KindClassifier.fromSysfs(KindEvidence(hardwareType: type, hasDevice: false)) == .wwan)
    }

    @Test func loopbackTypeIsOther() {
        #expect(classify("lo", KindEvidence(hardwareType: 772)) == .other)
    }

    @Test func etherWithDeviceIsEthernetWhateverTheName() {
        #expect(classify("lan0", KindEvidence(hardwareType: 1, hasDevice: true)) == .ethernet)
        #expect(classify("wan", KindEvidence(hardwareType: 1, hasDevice: true)) == .ethernet)
    }

    @Test(arguments: [
        ("eth0", InterfaceKind.ethernet),
        ("enp3s0", .ethernet),
        ("wlan0", .wifi),
        ("wlp2s0", .wifi),
        ("wwp0s20u4i4", .wwan),
        ("wwan0", .wwan),
        ("veth1", .other),
        ("usb0", .other),
    ])
    func etherWithoutDeviceFallsBackToName(name: String, expected: InterfaceKind) {
        let virtual = KindEvidence(hardwareType: 1, hasDevice: false)
        #expect(KindClassifier.fromSysfs(virtual) == nil)
        #expect(classify(InterfaceName(stringLiteral: name), virtual) == expected)
    }

    @Test(arguments: ["bridge", "bond", "vlan", "wireguard", "tun"])
    func virtualDevTypesAreOther(devType: String) {
        // Even when the name looks like ethernet or wifi.
        #expect(classify("eth0", KindEvidence(devType: devType, hardwareType: 1)) == .other)
        #expect(classify("wlan-br", KindEvidence(devType: devType, hardwareType: 1)) == .other)
    }

    @Test func noSysfsEvidenceUsesTheName() {
        #expect(classify("wlan0", nil) == .wifi)
        #expect(classify("eth1", nil) == .ethernet)
        #expect(classify("tun0", nil) == .other)
        #expect(classify("eth1", KindEvidence()) == .ethernet)
        #expect(KindClassifier.fromName("br0") == nil)
    }
}
