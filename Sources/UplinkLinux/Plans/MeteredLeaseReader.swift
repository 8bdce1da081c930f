import UplinkCore

/// Tells whether an uplink's DHCP lease says "metered" (option 43 with
/// ANDROID_METERED, what phone hotspots send), from the lease files the DHCP clients
/// of a gateway keep: ISC dhclient's (also NetworkManager's dhclient-based ones) and
/// systemd-networkd's. NetworkManager's own client and busybox udhcpc keep no option
/// 43 on disk: set `metered = yes` for such uplinks. Reads are small and bounded.
package struct MeteredLeaseReader: Sendable {
    /// systemd-networkd's lease files, by interface index (fixed by networkd).
    package var networkdLeaseDirectory = "/run/systemd/netif/leases"

    package init() {}

    /// `settings` names the dhclient and NetworkManager lease directories (`[dns]`).
    package func leaseSaysMetered(_ name: InterfaceName, index: Int, settings: DNSSettings) -> Bool {
        if index > 0, let text = SmallFile.read("\(networkdLeaseDirectory)/\(index)", limit: 64 * 1_024),
           MeteredLease.networkd(text) {
            return true
        }
        // The newest dhclient lease file that names the interface decides.
        return DhclientLeaseFiles.newest(in: settings.dhclientLeaseDirectories + settings.networkManagerDirectories) { text in
            text.containsSubstring("interface \"\(name.value)\"") ? MeteredLease.dhclient(text, interface: name.value) : nil
        } ?? false
    }
}
