import UplinkCore

/// What the host's network files say about one uplink (DHCP lease files, resolvconf,
/// networkd and resolved state): its DNS servers, its network's captive-portal API, and
/// whether its lease says it is metered. `settings` names the files and sources.
package protocol NetworkFileReading {
    /// `configured` (its `[interface NAME] dns`) first, then the enabled sources.
    func dnsServers(for name: InterfaceName, index: Int, configured: [IPAddress]?, settings: DNSSettings) -> DNSServers
    /// The captive-portal API URI its network announced (RFC 8910), if any.
    func captivePortalAPI(for name: InterfaceName, index: Int, settings: DNSSettings) -> ProbeURL?
    func leaseSaysMetered(_ name: InterfaceName, index: Int, settings: DNSSettings) -> Bool
}
