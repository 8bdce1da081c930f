import Glibc
import UplinkCore

/// Finds an uplink's own DNS servers in the files the network managers of a gateway
/// leave behind, in the documented order (`DNSSource.allCases`): the configuration,
/// systemd-networkd/resolved, NetworkManager, dhclient, resolvconf, /etc/resolv.conf.
/// Reads are small and bounded; a missing or malformed file just means "next source".
public struct DNSServerFinder: Sendable {
    public var settings: DNSSettings

    /// Lease files can grow for days before dhclient rewrites them; the newest
    /// leases are at the end, so only the tail is read.
    static let leaseTailBytes = 256 * 1_024
    static let stateFileBytes = 64 * 1_024

    public init(settings: DNSSettings) {
        self.settings = settings
    }

    public func servers(for name: InterfaceName, index: Int) -> DNSServers {
        for source in DNSSource.allCases where settings.sources.contains(source) {
            if let found = lookup(source, name: name.value, index: index), !found.addresses.isEmpty {
                return found
            }
        }
        return .none
    }

    private func lookup(_ source: DNSSource, name: String, index: Int) -> DNSServers? {
        switch source {
        case .configured:
            guard let addresses = settings.configuredServers[name] else { return nil }
            return DNSServers(source: .configured, addresses: addresses, origin: "[interface \(name)] dns")
        case .networkd:
            // Per-link state is keyed by ifindex; without one it cannot be found.
            guard index > 0 else { return nil }
            let networkd = "\(settings.networkdDirectory)/\(index)"
            if let text = SmallFile.read(networkd, limit: Self.stateFileBytes) {
                let addresses = DNSFileParsers.networkdLinkState(text)
                if !addresses.isEmpty { return DNSServers(source: .networkd, addresses: addresses, origin: networkd) }
            }
            let resolved = "\(settings.resolvedDirectory)/\(index)"
            guard let text = SmallFile.read(resolved, limit: Self.stateFileBytes) else { return nil }
            return DNSServers(source: .networkd, addresses: DNSFileParsers.resolvedLinkState(text), origin: resolved)
        case .networkmanager:
            // internal-UUID-IFACE.lease (systemd format) or dhclient-UUID-IFACE.lease;
            // the newest wins when a device has had several connections.
            let directory = settings.networkManagerDirectory
            let candidates = entries(of: directory).filter { $0.hasSuffix("-\(name).lease") }
            let newest = candidates.max { (SmallFile.modificationSeconds("\(directory)/\($0)") ?? 0)
                < (SmallFile.modificationSeconds("\(directory)/\($1)") ?? 0) }
            guard let file = newest, let text = SmallFile.tail("\(directory)/\(file)", limit: Self.leaseTailBytes) else {
                return nil
            }
            let addresses = file.hasPrefix("internal-") ? DNSFileParsers.systemdLease(text)
                                                        : DNSFileParsers.dhclientLeases(text, interface: name)
            return DNSServers(source: .networkmanager, addresses: addresses, origin: "\(directory)/\(file)")
        case .dhclient:
            // Every dhclient lease file of each directory (dhclient.leases,
            // dhclient.eth0.leases, dhclient6.eth0.leases, ...), each filtered by the
            // interface named inside its leases; servers of all of them, newest file first.
            var found: [(modified: Int, path: String, addresses: [IPAddress])] = []
            for directory in settings.dhclientLeaseDirectories {
                for file in entries(of: directory)
                where file.hasPrefix("dhclient") && (file.hasSuffix(".leases") || file.hasSuffix(".lease")) {
                    let path = "\(directory)/\(file)"
                    guard let text = SmallFile.tail(path, limit: Self.leaseTailBytes) else { continue }
                    let addresses = DNSFileParsers.dhclientLeases(text, interface: name)
                    if !addresses.isEmpty {
                        found.append((SmallFile.modificationSeconds(path) ?? 0, path, addresses))
                    }
                }
            }
            guard !found.isEmpty else { return nil }
            found.sort { $0.modified > $1.modified }
            var addresses: [IPAddress] = []
            for entry in found { for address in entry.addresses where !addresses.contains(address) { addresses.append(address) } }
            return DNSServers(source: .dhclient, addresses: addresses, origin: found.map(\.path).joined(separator: ","))
        case .resolvconf:
            // Debian resolvconf keeps one file per interface and program: eth0.dhclient,
            // wlan0.udhcpc, eth1.inet (ifupdown static).
            let directory = settings.resolvconfDirectory
            var addresses: [IPAddress] = []
            var origins: [String] = []
            for file in entries(of: directory).sorted() where file == name || file.hasPrefix("\(name).") {
                guard let text = SmallFile.read("\(directory)/\(file)", limit: Self.stateFileBytes) else { continue }
                for address in DNSFileParsers.resolvConf(text) where !addresses.contains(address) { addresses.append(address) }
                origins.append("\(directory)/\(file)")
            }
            return DNSServers(source: .resolvconf, addresses: addresses, origin: origins.joined(separator: ","))
        case .resolvConf:
            guard let text = SmallFile.read(settings.resolvConfPath, limit: Self.stateFileBytes) else { return nil }
            return DNSServers(source: .resolvConf, addresses: DNSFileParsers.resolvConf(text), origin: settings.resolvConfPath)
        }
    }

    private func entries(of directory: String) -> [String] {
        (try? SmallFile.directoryEntries(directory, limit: 1_024)) ?? []
    }
}
