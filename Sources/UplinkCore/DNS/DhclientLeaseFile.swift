/// ISC dhclient's lease files: `lease { ... }` (DHCPv4) and `lease6 { ... }` (DHCPv6)
/// blocks, appended as leases come, so the last block of an interface is its newest.
package enum DhclientLeaseFile {
    /// The lines of the last DHCPv4 and the last DHCPv6 lease of `interface`.
    package static func lastLeases(_ text: String, interface: String) -> (dhcp4: [String], dhcp6: [String]) {
        var lastV4: [String] = []
        var lastV6: [String] = []
        var depth = 0
        var isLease6 = false
        var blockInterface: String?
        var blockLines: [String] = []
        for rawLine in text.split(whereSeparator: { $0 == "\n" }) {
            let line = rawLine.trimmingWhitespace
            if depth == 0 {
                // A new top-level block: whatever came before is finished.
                isLease6 = line.hasPrefix("lease6")
                blockInterface = nil
                blockLines = []
            }
            if depth == 1 && line.hasPrefix("interface ") {
                blockInterface = String(line.dropFirst("interface ".count)).trimmingWhitespace.trimmingCharacters(";\"")
            }
            blockLines.append(line)
            // Braces inside quoted strings (a domain-search option, say) do not count.
            var quoted = false
            for character in line {
                if character == "\"" { quoted.toggle() }
                guard !quoted else { continue }
                if character == "{" { depth += 1 }
                if character == "}" && depth > 0 {
                    depth -= 1
                    if depth == 0 && blockInterface == interface {
                        if isLease6 { lastV6 = blockLines } else { lastV4 = blockLines }
                    }
                }
            }
        }
        return (lastV4, lastV6)
    }

    /// The value of `option NAME VALUE;` in a lease's lines.
    package static func option(_ name: String, in lines: [String]) -> String? {
        let prefix = "option \(name) "
        guard let line = lines.last(where: { $0.hasPrefix(prefix) }) else { return nil }
        return String(line.dropFirst(prefix.count)).trimmingWhitespace.trimmingCharacters(";").trimmingWhitespace
    }
}

/// The DHCP vendor option (43) phone hotspots send to say the uplink is metered:
/// NetworkManager and Android look for "ANDROID_METERED" anywhere in it.
package enum MeteredLease {
    static let marker = Array("ANDROID_METERED".utf8)

    /// A dhclient lease file: the interface's newest DHCPv4 lease carries it, as dhclient
    /// writes option 43 (quoted text, or colon-separated hex when not printable).
    package static func dhclient(_ text: String, interface: String) -> Bool {
        let lease = DhclientLeaseFile.lastLeases(text, interface: interface).dhcp4
        guard let value = DhclientLeaseFile.option("vendor-encapsulated-options", in: lease) else { return false }
        if value.hasPrefix("\"") { return contains(Array(value.utf8)) }
        return contains(hexBytes(value.split(separator: ":")))
    }

    /// systemd-networkd's lease file (`/run/systemd/netif/leases/IFINDEX`):
    /// `VENDOR_SPECIFIC=` in plain hex.
    package static func networkd(_ text: String) -> Bool {
        for line in text.split(separator: "\n") where line.hasPrefix("VENDOR_SPECIFIC=") {
            let hex = Array(line.dropFirst("VENDOR_SPECIFIC=".count).trimmingWhitespace)
            guard hex.count % 2 == 0 else { return false }
            let pairs = stride(from: 0, to: hex.count, by: 2).map { Substring(String(hex[$0..<$0 + 2])) }
            return contains(hexBytes(pairs))
        }
        return false
    }

    static func hexBytes(_ fields: [Substring]) -> [UInt8] {
        fields.compactMap { UInt8($0.trimmingWhitespace, radix: 16) }
    }

    static func contains(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= marker.count else { return false }
        return (0...(bytes.count - marker.count)).contains { bytes[$0..<$0 + marker.count].elementsEqual(marker) }
    }
}
