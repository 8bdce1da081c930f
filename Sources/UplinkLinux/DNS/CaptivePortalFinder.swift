import UplinkCore

/// Finds the captive-portal API URI (RFC 8910: DHCPv4 option 114, DHCPv6 option 103,
/// RA option 37) that an uplink's network announced, in the same files the DNS servers
/// come from: systemd-networkd's link state and leases, then the dhclient lease files
/// (dhclient's own and NetworkManager's dhclient-based ones; the newest file naming
/// the interface with a URI wins). dhclient records option 114 only when told to
/// (uplinkd(8), "CAPTIVE-PORTAL API"). Reads are small and bounded.
package struct CaptivePortalFinder: Sendable {
    package var settings: DNSSettings
    package var networkdLeaseDirectory = "/run/systemd/netif/leases"

    package init(settings: DNSSettings) {
        self.settings = settings
    }

    package func uri(for name: InterfaceName, index: Int) -> ProbeURL? {
        if index > 0 {
            for path in ["\(settings.networkdDirectory)/\(index)", "\(networkdLeaseDirectory)/\(index)"] {
                if let text = SmallFile.read(path, limit: DNSServerFinder.stateFileBytes),
                   let url = CaptivePortalAPI.networkdURI(text) { return url }
            }
        }
        return DhclientLeaseFiles.newest(in: settings.dhclientLeaseDirectories + settings.networkManagerDirectories) { text in
            CaptivePortalAPI.dhclientURI(text, interface: name.value)
        }
    }
}
