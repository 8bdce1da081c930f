/// An IPv4 or IPv6 address as raw bytes, with the scope questions verdicts depend on.
package struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    package let family: AddressFamily
    /// 4 bytes for IPv4, 16 for IPv6, network order.
    package let bytes: [UInt8]

    package init?(family: AddressFamily, bytes: [UInt8]) {
        guard bytes.count == (family == .ipv4 ? 4 : 16) else { return nil }
        self.family = family
        self.bytes = bytes
    }

    package init?(_ text: String) {
        if let v4 = IPAddress.parseIPv4(text) {
            self.init(family: .ipv4, bytes: v4)
        } else if let v6 = IPAddress.parseIPv6(text) {
            self.init(family: .ipv6, bytes: v6)
        } else {
            return nil
        }
    }

    /// 169.254.0.0/16 or fe80::/10: usable on the link only, never toward the internet.
    package var isLinkLocal: Bool {
        switch family {
        case .ipv4: return bytes[0] == 169 && bytes[1] == 254
        case .ipv6: return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80
        }
    }

    package var isLoopback: Bool {
        switch family {
        case .ipv4: return bytes[0] == 127
        case .ipv6: return bytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    /// RFC 1918, CGNAT (100.64/10) and IPv6 ULA (fc00::/7).
    package var isPrivate: Bool {
        switch family {
        case .ipv4:
            return bytes[0] == 10 || (bytes[0] == 172 && (bytes[1] & 0xf0) == 16)
                || (bytes[0] == 192 && bytes[1] == 168) || (bytes[0] == 100 && (bytes[1] & 0xc0) == 64)
        case .ipv6:
            return (bytes[0] & 0xfe) == 0xfc
        }
    }

    /// 0.0.0.0/8 or ::, never a destination.
    package var isUnspecified: Bool {
        switch family {
        case .ipv4: return bytes[0] == 0
        case .ipv6: return bytes.allSatisfy { $0 == 0 }
        }
    }

    /// 224.0.0.0/4 or ff00::/8: a group, not one host.
    package var isMulticast: Bool {
        switch family {
        case .ipv4: return (bytes[0] & 0xf0) == 0xe0
        case .ipv6: return bytes[0] == 0xff
        }
    }

    /// 255.255.255.255, the limited broadcast address.
    package var isBroadcast: Bool {
        family == .ipv4 && bytes.allSatisfy { $0 == 0xff }
    }

    /// "unspecified", "multicast" or "broadcast" for an address that names no one host
    /// that could answer (a server or a probe host); nil for one that does.
    package var notOneHost: String? {
        if isUnspecified { return "unspecified" }
        if isMulticast { return "multicast" }
        if isBroadcast { return "broadcast" }
        return nil
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d).
    package var mappedIPv4: IPAddress? {
        guard family == .ipv6, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff else { return nil }
        return IPAddress(family: .ipv4, bytes: Array(bytes[12...]))
    }

    /// An address a public host name can never legitimately resolve to: private,
    /// CGNAT, ULA, link-local, loopback or unspecified (also inside ::ffff:0:0/96).
    package var isSpecialPurpose: Bool {
        if let mapped = mappedIPv4 { return mapped.isSpecialPurpose }
        return isPrivate || isLinkLocal || isLoopback || isUnspecified
    }

    package var description: String {
        switch family {
        case .ipv4:
            return bytes.map(String.init).joined(separator: ".")
        case .ipv6:
            var groups: [UInt16] = []
            for index in stride(from: 0, to: 16, by: 2) {
                groups.append(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]))
            }
            // RFC 5952: compress the longest run (length >= 2) of zero groups.
            var bestStart = -1, bestLength = 0, runStart = -1
            for index in 0...8 {
                if index < 8 && groups[index] == 0 {
                    if runStart < 0 { runStart = index }
                } else if runStart >= 0 {
                    if index - runStart > bestLength { bestStart = runStart; bestLength = index - runStart }
                    runStart = -1
                }
            }
            if bestLength < 2 { bestStart = -1 }
            var parts: [String] = []
            var index = 0
            while index < 8 {
                if index == bestStart {
                    parts.append(index == 0 ? ":" : "")
                    index += bestLength
                    if index == 8 { parts.append("") }
                    continue
                }
                parts.append(String(groups[index], radix: 16))
                index += 1
            }
            return parts.joined(separator: ":")
        }
    }

    static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var result: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = UInt8(part) else { return nil }
            result.append(value)
        }
        return result
    }

    static func parseIPv6(_ text: String) -> [UInt8]? {
        // Zone identifiers (fe80::1%eth0) are not meaningful for probe targets.
        if text.isEmpty || text.contains("%") { return nil }
        let halves = text.components(separatedByString: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if allowIPv4Tail && index == pieces.count - 1 && piece.contains(".") {
                    guard let v4 = parseIPv4(String(piece)) else { return nil }
                    result.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    result.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard !piece.isEmpty, piece.count <= 4, let value = UInt16(piece, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        var all: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0], allowIPv4Tail: false),
                  let tail = groups(halves[1], allowIPv4Tail: true),
                  head.count + tail.count <= 7 else { return nil }
            all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let only = groups(halves[0], allowIPv4Tail: true), only.count == 8 else { return nil }
            all = only
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}
