import Testing
import UplinkCore
import UplinkTestSupport
import UplinkLinux

/// The discovery order over real files in a temporary tree (FakeSysfs is a generic
/// temporary directory builder).
@Suite("DNS server discovery")
struct DNSServerFinderTests {
    func settings(_ tree: FakeSysfs) -> DNSSettings {
        var settings = DNSSettings()
        settings.networkdDirectory = "\(tree.root)/networkd"
        settings.resolvedDirectory = "\(tree.root)/resolved"
        settings.networkManagerDirectories = ["\(tree.root)/nm"]
        settings.dhclientLeaseDirectories = ["\(tree.root)/dhcp"]
        settings.resolvconfDirectory = "\(tree.root)/resolvconf"
        settings.resolvConfPath = "\(tree.root)/resolv.conf"
        return settings
    }

    @Test func firstSourceWithServersWinsInTheDocumentedOrder() throws {
        let tree = try FakeSysfs()
        defer { tree.remove() }
        for directory in ["networkd", "resolved", "nm", "dhcp", "resolvconf"] { try tree.directory(directory) }
        try tree.file("resolv.conf", "nameserver 127.0.0.53\n")
        try tree.file("resolvconf/wlan0.udhcpc", "nameserver 10.2.0.1\n")
        try tree.file("resolvconf/wlan00.udhcpc", "nameserver 10.99.0.1\n")
        try tree.file("resolvconf/wlan0.10.udhcpc", "nameserver 10.98.0.1\n")
        try tree.file("dhcp/dhclient6.eth0.leases", "lease6 {\n  interface \"eth0\";\n  option dhcp6.name-servers 2001:db8::53;\n}\n")
        try tree.file("dhcp/dhclient.eth0.leases", "lease {\n  interface \"eth0\";\n  option domain-name-servers 10.1.0.1;\n}\n")
        try tree.file("nm/internal-0b3c-usb0.lease", "ADDRESS=10.3.0.5\nDNS=10.3.0.1\n")
        try tree.file("networkd/7", "OPER_STATE=routable\nDNS=10.4.0.1\n")
        try tree.file("resolved/8", "SERVERS=10.5.0.1\n")

        var finder = DNSServerFinder(settings: settings(tree))
        func servers(_ name: String, _ index: Int) -> DNSServers { finder.servers(for: InterfaceName(name)!, index: index) }

        // DHCPv4 and DHCPv6 leases live in separate files; both count.
        #expect(servers("eth0", 2).source == .dhclient)
        #expect(Set(servers("eth0", 2).addresses) == [IPAddress("10.1.0.1")!, IPAddress("2001:db8::53")!])
        #expect(servers("wlan0", 3).source == .resolvconf)
        #expect(servers("wlan0", 3).addresses == [IPAddress("10.2.0.1")!])
        #expect(servers("usb0", 4).source == .networkmanager)
        #expect(servers("lte0", 7).source == .networkd)
        #expect(servers("lte1", 8).addresses == [IPAddress("10.5.0.1")!])
        let fallback = servers("eth9", 9)
        #expect(fallback.source == .resolvConf)
        #expect(!fallback.isPerUplink)

        let configured = finder.servers(for: "eth0", index: 2, configured: [IPAddress("192.0.2.53")!])
        #expect(configured.source == .configured)

        finder.settings.sources = [.dhclient]
        #expect(servers("wlan0", 3) == .none)
    }
}
