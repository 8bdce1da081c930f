import UplinkCore

/// ISC dhclient's lease files in some directories (`dhclient.leases`,
/// `dhclient.eth0.leases`, `dhclient6.eth0.leases`, NetworkManager's
/// `dhclient-UUID-wlan0.lease`), where the DNS servers, the metered marker and the
/// captive-portal API come from. Lease files grow for days before dhclient rewrites
/// them and the newest leases are at the end, so only their tails are read.
enum DhclientLeaseFiles {
    static let tailBytes = 256 * 1_024

    /// Every such file of `directories` (a missing directory has none).
    static func paths(in directories: [String]) -> [String] {
        directories.flatMap { directory in
            ((try? SmallFile.directoryEntries(directory, limit: 1_024)) ?? [])
                .filter { $0.hasPrefix("dhclient") && ($0.hasSuffix(".leases") || $0.hasSuffix(".lease")) }
                .map { "\(directory)/\($0)" }
        }
    }

    /// What `read` finds in the most recently modified file of `directories` that it
    /// finds anything in (nil from `read`: the file does not say).
    static func newest<Value>(in directories: [String], _ read: (String) -> Value?) -> Value? {
        var newest: (modified: Int, value: Value)?
        for path in paths(in: directories) {
            guard let text = SmallFile.tail(path, limit: tailBytes), let value = read(text) else { continue }
            let modified = SmallFile.modificationSeconds(path) ?? 0
            if modified >= newest?.modified ?? Int.min { newest = (modified, value) }
        }
        return newest?.value
    }
}
