import Glibc
import UplinkCore

/// Finds an uplink's own DNS servers in the files the network managers of a gateway
/// leave behind, in the documented order (`DNSSource.allCases`): the configuration,
/// systemd-networkd/resolved, NetworkManager, dhclient, resolvconf, /etc/resolv.conf.
/// Reads are small and bounded; a missing or malformed file just means "next source".
package struct DNSServerFinder: Sendable {
    package var settings: DNSSettings

    static let stateFileBytes = 64 * 1_024

    package init(settings: DNSSettings) {
        self.settings = settings
    }

    /// The servers of one uplink: `configured` (its `[interface NAME] dns`) first,
    /// then the files of the enabled sources, in the documented order.
    package func servers(for name: InterfaceName, index: Int, configured: [IPAddress]? = nil) -> DNSServers {
        for source in DNSSource.allCases where settings.sources.contains(source) {
            if let found = lookup(source, name: name.value, index: index, configured: configured), !found.addresses.isEmpty {
                return found
            }
        }
        return .none
    }

    private func lookup(_ source: DNSSource, name: String, index: Int, configured: [IPAddress]?) -> DNSServers? {
        switch source {
        case .configured:
            guard let addresses = configured else { return nil }
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
            // Lease files NAME-UUID-IFACE.lease in /run/NetworkManager or
            // /var/lib/NetworkManager: dhclient's (dhclient-, dhclient6-) and the
            // systemd-style internal- ones of older releases. The default nettools
            // client records no servers; NetworkManager then hands them to
            // systemd-resolved, which the networkd source reads.
            let files = settings.networkManagerDirectories.flatMap { directory in
                entries(of: directory).filter { $0.hasSuffix("-\(name).lease") }.map { "\(directory)/\($0)" }
            }
            return newestPerFamily(files, source: .networkmanager) { path, text in
                path.split(separator: "/").last!.hasPrefix("internal-")
                    ? (DNSFileParsers.systemdLease(text), [])
                    : DNSFileParsers.dhclientLeaseServers(text, interface: name)
            }
        case .dhclient:
            // Every dhclient lease file of each directory (dhclient.leases,
            // dhclient.eth0.leases, dhclient6.eth0.leases, ...), filtered by the
            // interface named inside each lease; per family, the newest file wins, so
            // files of old runs do not add stale servers.
            return newestPerFamily(DhclientLeaseFiles.paths(in: settings.dhclientLeaseDirectories), source: .dhclient) { _, text in
                DNSFileParsers.dhclientLeaseServers(text, interface: name)
            }
        case .resolvconf:
            // Debian resolvconf keeps one file per interface and program: eth0.dhclient,
            // wlan0.udhcpc, eth1.inet (ifupdown static).
            let directory = settings.resolvconfDirectory
            var addresses: [IPAddress] = []
            var origins: [String] = []
            for file in entries(of: directory).sorted() where DNSServerFinder.isResolvconfFile(file, of: name) {
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

    /// `eth0` and `eth0.dhclient` belong to eth0; `eth0.10.dhclient` to the VLAN eth0.10.
    static func isResolvconfFile(_ file: String, of name: String) -> Bool {
        if file == name { return true }
        guard file.hasPrefix("\(name).") else { return false }
        let next = file.dropFirst(name.count + 1).prefix { $0 != "." }
        return !next.isEmpty && !next.allSatisfy(\.isNumber)
    }

    /// Reads lease files and keeps, per DHCP family, the servers of the most recently
    /// modified file that names any.
    private func newestPerFamily(_ paths: [String], source: DNSSource,
                                 parse: (String, String) -> (dhcp4: [IPAddress], dhcp6: [IPAddress])) -> DNSServers? {
        var best4: (modified: Int, path: String, addresses: [IPAddress])?
        var best6: (modified: Int, path: String, addresses: [IPAddress])?
        for path in paths {
            guard let text = SmallFile.tail(path, limit: DhclientLeaseFiles.tailBytes) else { continue }
            let modified = SmallFile.modificationSeconds(path) ?? 0
            let found = parse(path, text)
            if !found.dhcp4.isEmpty, modified >= best4?.modified ?? Int.min { best4 = (modified, path, found.dhcp4) }
            if !found.dhcp6.isEmpty, modified >= best6?.modified ?? Int.min { best6 = (modified, path, found.dhcp6) }
        }
        let chosen = [best4, best6].compactMap { $0 }
        guard !chosen.isEmpty else { return nil }
        var addresses: [IPAddress] = []
        for entry in chosen { for address in entry.addresses where !addresses.contains(address) { addresses.append(address) } }
        return DNSServers(source: source, addresses: addresses, origin: chosen.map(\.path).joined(separator: ","))
    }

    private func entries(of directory: String) -> [String] {
        (try? SmallFile.directoryEntries(directory, limit: 1_024)) ?? []
    }
}
