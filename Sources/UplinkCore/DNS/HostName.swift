/// The one host-name rule of uplinkd (probe URLs, `known-answer`): RFC 1123 labels of
/// letters, digits, '-' and '_' (no label starting or ending with '-'), 1 to 63 bytes
/// each, at most 253 bytes in all, an optional trailing dot. A dotted IPv4 literal
/// passes too; callers that want a name only also check `IPAddress(text) == nil`.
package enum HostName {
    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        let effective = labels.last == "" ? labels.dropLast() : labels[...]
        guard !effective.isEmpty else { return false }
        for label in effective {
            guard !label.isEmpty, label.utf8.count <= 63, label.first != "-", label.last != "-" else { return false }
            for byte in label.utf8 {
                let allowed = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a)
                    || (byte >= 0x61 && byte <= 0x7a) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                guard allowed else { return false }
            }
        }
        return true
    }
}
