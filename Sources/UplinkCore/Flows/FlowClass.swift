/// One traffic class (`[class NAME]`): new connections that match it take the first
/// usable uplink of its list, and the default choice without its `never` uplinks when
/// none of them is usable.
package struct FlowClass: Sendable, Equatable {
    package var name: String
    package var transport: Transport?
    /// Destination ports (needs `protocol`); empty: any.
    package var ports: [ClosedRange<Int>] = []
    /// Destination prefixes; empty: any.
    package var destinations: [IPPrefix] = []
    /// In order of preference.
    package var uplinks: [InterfaceName] = []
    /// Never carries the class, not even when the default choice falls back to it.
    package var never: [InterfaceName] = []
    /// The line of the section header, for errors about the whole class.
    package var line = 0

    package init(name: String) {
        self.name = name
    }

    package enum Transport: String, Sendable, CaseIterable {
        case tcp
        case udp
    }

    /// What is wrong with a finished section, or nil.
    package var problem: String? {
        if transport == nil && !ports.isEmpty { return "ports need a protocol (tcp or udp)" }
        if transport == nil && destinations.isEmpty { return "a class matches nothing without protocol or destination" }
        if uplinks.isEmpty { return "uplinks names none" }
        if let both = uplinks.first(where: never.contains) { return "\(both) is in both uplinks and never" }
        return nil
    }
}

/// An address prefix (`203.0.113.0/24`, `2001:db8::/32`, or one address).
package struct IPPrefix: Sendable, Hashable, CustomStringConvertible {
    package var address: IPAddress
    package var length: Int

    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.family == .ipv4 ? 32 : 128
        var length = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isASCII) else { return nil }
            length = given
        }
        // Host bits set (10.0.0.1/8) is most likely a typo of the operator's.
        for (index, byte) in address.bytes.enumerated() {
            let kept = max(0, min(8, length - index * 8))
            guard kept == 8 || byte & ~UInt8(truncatingIfNeeded: 0xff << (8 - kept)) == 0 else { return nil }
        }
        self.address = address
        self.length = length
    }

    package var description: String { "\(address)/\(length)" }
}
