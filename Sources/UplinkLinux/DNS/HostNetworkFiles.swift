import UplinkCore

/// The host's network files behind the agent's `NetworkFileReading` seam: the DNS
/// servers `DNSServerFinder` finds, the API `CaptivePortalFinder` finds, the metered
/// flag `MeteredLeaseReader` reads.
package struct HostNetworkFiles: NetworkFileReading, Sendable {
    package init() {}

    package func dnsServers(for name: InterfaceName, index: Int, configured: [IPAddress]?,
                           settings: DNSSettings) -> DNSServers {
        DNSServerFinder(settings: settings).servers(for: name, index: index, configured: configured)
    }

    package func captivePortalAPI(for name: InterfaceName, index: Int, settings: DNSSettings) -> ProbeURL? {
        CaptivePortalFinder(settings: settings).uri(for: name, index: index)
    }

    package func leaseSaysMetered(_ name: InterfaceName, index: Int, settings: DNSSettings) -> Bool {
        MeteredLeaseReader().leaseSaysMetered(name, index: index, settings: settings)
    }
}
