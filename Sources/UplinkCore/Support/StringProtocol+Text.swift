/// The few text helpers the core needs, in one place: the standard library lacks them
/// and Foundation (which has some) is not linked.
extension StringProtocol {
    /// The text without leading and trailing spaces, tabs, CR and LF.
    package var trimmingWhitespace: String {
        // "\r\n" is a single Character in Swift, equal to neither "\r" nor "\n".
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}

extension String {
    /// The string with control and non-ASCII characters escaped, for error messages
    /// that quote untrusted input.
    package var printableEscaped: String {
        var result = ""
        for scalar in unicodeScalars {
            if scalar.value >= 0x20 && scalar.value < 0x7f {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return result
    }

    /// Control characters replaced, so text from a child process or the network
    /// cannot forge log lines.
    package var printableForLog: String {
        String(unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
    }

    /// Splits on a multi-character separator (the standard library's split takes one
    /// element; Foundation's components(separatedBy:) is not linked into the core),
    /// matched byte for byte (SubstringSearch). An empty separator splits nothing.
    func components(separatedByString separator: String) -> [String] {
        let bytes = Array(utf8)
        let pattern = Array(separator.utf8)
        guard !pattern.isEmpty else { return [String(self)] }
        var result: [String] = []
        var start = 0
        while let found = SubstringSearch.firstOffset(of: pattern, in: bytes, from: start) {
            result.append(String(decoding: bytes[start..<found], as: UTF8.self))
            start = found + pattern.count
        }
        result.append(String(decoding: bytes[start...], as: UTF8.self))
        return result
    }

    /// The string without any of `characters` at either end.
    func trimmingCharacters(_ characters: String) -> String {
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return String(text)
    }

    /// Every byte outside printable ASCII (and the space) as %XX, so text from the
    /// network stays one safe token in logs, environments and state-file fields.
    func percentEncodingUnsafeBytes(limit: Int) -> String {
        // Cut after encoding, never inside a %XX: the result is at most `limit`
        // bytes wherever it goes, and encoding it again changes nothing.
        var result = ""
        var count = 0
        for byte in utf8 {
            let piece: String
            if byte > 0x20 && byte < 0x7f {
                piece = String(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                piece = "%" + (hex.count == 1 ? "0" : "") + hex
            }
            guard count + piece.utf8.count <= limit else { break }
            result += piece
            count += piece.utf8.count
        }
        return result
    }
}
