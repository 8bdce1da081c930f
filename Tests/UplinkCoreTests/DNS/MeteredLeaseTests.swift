import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Metered DHCP leases (ANDROID_METERED)")
struct MeteredLeaseTests {
    private func lease(_ interface: String, _ options: String) -> String {
        """
        lease {
          interface "\(interface)";
          fixed-address 192.168.43.20;
          \(options)
          renew 3 2026/11/25 10:00:00;
        }

        """
    }

    @Test func dhclientQuotedText() {
        let text = lease("wlan0", "option vendor-encapsulated-options \"ANDROID_METERED\";")
        #expect(MeteredLease.dhclient(text, interface: "wlan0"))
        #expect(!MeteredLease.dhclient(text, interface: "wlan1"))
    }

    @Test func dhclientHexWithoutZeroPadding() {
        // Sub-option 1, length 15, then the marker, as dhclient prints non-printable data.
        let hex = "1:f:41:4e:44:52:4f:49:44:5f:4d:45:54:45:52:45:44"
        #expect(MeteredLease.dhclient(lease("wlan0", "option vendor-encapsulated-options \(hex);"), interface: "wlan0"))
    }

    @Test func onlyTheNewestLeaseCounts() {
        let text = lease("wlan0", "option vendor-encapsulated-options \"ANDROID_METERED\";")
            + lease("wlan0", "option domain-name-servers 10.0.0.1;")
        #expect(!MeteredLease.dhclient(text, interface: "wlan0"))
    }

    @Test func networkdPlainHex() {
        #expect(MeteredLease.networkd("ADDRESS=192.168.43.20\nVENDOR_SPECIFIC=414e44524f49445f4d455445524544\n"))
        #expect(!MeteredLease.networkd("ADDRESS=192.168.43.20\nVENDOR_SPECIFIC=0102\n"))
        #expect(!MeteredLease.networkd("ADDRESS=192.168.43.20\n"))
    }
}
