/// Parsers for the value types of the configuration.
package enum ValueParser {
    /// "5s", "500ms", "1m", "1h", "1d"; a unit is required so nobody guesses.
    package static func duration(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        let units: [(String, Int)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count).trimmingWhitespace
            guard let value = Int(number) else { break }
            let milliseconds = value.multipliedReportingOverflow(by: scale)
            guard !milliseconds.overflow, range.contains(milliseconds.partialValue) else {
                throw ValueError("'\(text.printableEscaped)' is outside \(range.lowerBound)ms to \(range.upperBound)ms")
            }
            return milliseconds.partialValue
        }
        throw ValueError("expected a duration with a unit, such as 5s or 500ms; got '\(text.printableEscaped)'")
    }

    /// A signal level in dBm, "-115" or "-115dBm".
    package static func signalLevel(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        let number = text.lowercased().hasSuffix("dbm") ? String(text.dropLast(3)).trimmingWhitespace : text
        guard let value = Int(number), range.contains(value) else {
            throw ValueError("expected a level in dBm from \(range.lowerBound) to \(range.upperBound), such as -115, or off; got '\(text.printableEscaped)'")
        }
        return value
    }

    /// `modem = EQUIPMENT-ID` (an IMEI, MEID or ESN as ModemManager shows it) or `none`.
    package static func modemBinding(_ text: String) throws(ValueError) -> ModemBinding {
        if text == "none" { return .noModem }
        guard (1...64).contains(text.utf8.count),
              text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d }) else {
            throw ValueError("expected the modem's equipment identifier (its IMEI, as 'mmcli -m N' shows it: letters, digits and '-') or none; got '\(text.printableEscaped)'")
        }
        return .equipment(text)
    }

    /// One of a setting's words: "expected a, b or c" names them all, in order.
    package static func choice<Setting: RawRepresentable & CaseIterable>(_ text: String) throws(ValueError) -> Setting
    where Setting.RawValue == String {
        if let setting = Setting(rawValue: text) { return setting }
        let words = Setting.allCases.map(\.rawValue)
        let listed = words.count > 1 ? words.dropLast().joined(separator: ", ") + " or " + words.last! : words.joined()
        throw ValueError("expected \(listed); got '\(text.printableEscaped)'")
    }

    /// "50%" or "50", 1 to 100.
    package static func percent(_ text: String) throws(ValueError) -> Int {
        let number = text.hasSuffix("%") ? String(text.dropLast()).trimmingWhitespace : text
        guard let value = Int(number), (1...100).contains(value) else {
            throw ValueError("expected a percentage from 1% to 100%, got '\(text.printableEscaped)'")
        }
        return value
    }

    /// "4096", "4KiB", "1MiB".
    package static func byteCount(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        var number = text
        var scale = 1
        for (suffix, multiplier) in [("KiB", 1 << 10), ("MiB", 1 << 20)] where text.hasSuffix(suffix) {
            number = String(text.dropLast(3)).trimmingWhitespace
            scale = multiplier
        }
        let bytes = Int(number).map { $0.multipliedReportingOverflow(by: scale) }
        guard let bytes, !bytes.overflow, range.contains(bytes.partialValue) else {
            throw ValueError("expected a size from \(range.lowerBound) to \(range.upperBound) bytes (e.g. 4096 or 4KiB), got '\(text.printableEscaped)'")
        }
        return bytes.partialValue
    }

    /// A whole number in a range.
    package static func count(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ValueError("expected a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text.printableEscaped)'")
        }
        return value
    }

    /// "off" or a size such as 5MiB (1 KiB to 1 TiB).
    package static func optionalBudget(_ text: String) throws(ValueError) -> Int? {
        if text == "off" { return nil }
        return try byteCount(text, range: 1_024...(1 << 40))
    }

    /// An absolute path without "..", so a configuration cannot point outside where it says.
    package static func absolutePath(_ text: String) throws(ValueError) -> String {
        guard text.hasPrefix("/"), !text.split(separator: "/").contains(".."),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw ValueError("expected an absolute path without '..', got '\(text.printableEscaped)'")
        }
        return text
    }

    /// An absolute path naming a file: one ending in '/' names a directory.
    package static func absoluteFilePath(_ text: String) throws(ValueError) -> String {
        guard !text.hasSuffix("/") else { throw ValueError("expected a file, not a directory: '\(text.printableEscaped)'") }
        return try absolutePath(text)
    }

    /// IP addresses separated by spaces or commas; unspecified, multicast and broadcast refused.
    package static func addressList(_ text: String, at counts: ClosedRange<Int>) throws(ValueError) -> [IPAddress] {
        let words = list(text)
        guard counts.contains(words.count) else {
            throw ValueError("expected \(counts.lowerBound) to \(counts.upperBound) IP addresses, got \(words.count)")
        }
        var addresses: [IPAddress] = []
        for word in words {
            guard let address = IPAddress(word) else {
                throw ValueError("'\(word.printableEscaped)' is not an IPv4 or IPv6 address")
            }
            // A server is one host that answers: these never do.
            if let what = address.notOneHost {
                throw ValueError("'\(word.printableEscaped)' is \(what == "unspecified" ? "an" : "a") \(what) address, not one host")
            }
            addresses.append(address)
        }
        return addresses
    }

    /// Words separated by spaces, tabs or commas.
    package static func list(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
    }

    /// "auto", or interface names separated by spaces or commas.
    package static func uplinkSelection(_ text: String) throws(ValueError) -> UplinkSelection {
        if text == "auto" { return .automatic }
        let words = list(text)
        guard !words.isEmpty else { throw ValueError("expected 'auto' or a list of interface names") }
        var names: [InterfaceName] = []
        for word in words { names.append(try interfaceName(word)) }
        return .listed(names)
    }

    /// A valid interface name (see `InterfaceName`).
    package static func interfaceName(_ text: String) throws(ValueError) -> InterfaceName {
        if let problem = InterfaceName.problem(with: text) { throw ValueError(problem) }
        return InterfaceName(text)!
    }

    /// A DNS name that is not an address literal.
    package static func hostName(_ text: String) -> String? {
        IPAddress(text) == nil && HostName.isValid(text) ? text : nil
    }

    /// Kinds and/or interface names, best first (`priority`).
    package static func priority(_ text: String) throws(ValueError) -> [PriorityEntry] {
        let words = list(text)
        guard !words.isEmpty else { throw ValueError("expected kinds and/or interface names, best first") }
        var entries: [PriorityEntry] = []
        for word in words {
            if let kind = InterfaceKind(rawValue: word) {
                entries.append(.kind(kind))
            } else {
                entries.append(.interface(try interfaceName(word)))
            }
        }
        return entries
    }

    /// `ethernet`, `wifi`, `wwan` or `other`.
    package static func kind(_ text: String) throws(ValueError) -> InterfaceKind {
        guard let kind = InterfaceKind(rawValue: text) else {
            throw ValueError("expected one of \(InterfaceKind.allCases.map(\.rawValue).joined(separator: ", ")); got '\(text.printableEscaped)'")
        }
        return kind
    }

    /// `modemmanager`: auto, or yes / no as for any boolean.
    package static func modemManagerUse(_ text: String) throws(ValueError) -> ModemManagerUse {
        if text.lowercased() == "auto" { return .auto }
        do {
            return try boolean(text) ? .always : .never
        } catch {
            throw ValueError("expected auto, yes or no, got '\(text.printableEscaped)'")
        }
    }

    package static func boolean(_ text: String) throws(ValueError) -> Bool {
        switch text.lowercased() {
        case "yes", "true", "on": return true
        case "no", "false", "off": return false
        default: throw ValueError("expected yes or no, got '\(text.printableEscaped)'")
        }
    }

    /// A value as written: plain to the end of the line, or double-quoted to keep
    /// leading or trailing spaces, with \" \\ \n \t escapes.
    package static func unquote(_ raw: String) throws(ValueError) -> String {
        guard raw.hasPrefix("\"") else { return raw }
        guard raw.count >= 2, raw.hasSuffix("\"") else { throw ValueError("unterminated quoted value") }
        var result = ""
        var escaping = false
        for character in raw.dropFirst().dropLast() {
            if escaping {
                switch character {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "\\": result.append("\\")
                case "\"": result.append("\"")
                default: throw ValueError("unknown escape '\\\(String(character).printableEscaped)' in quoted value")
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "\"" {
                throw ValueError("a '\"' inside a quoted value must be written \\\"")
            } else {
                result.append(character)
            }
        }
        if escaping { throw ValueError("quoted value ends with a lone backslash") }
        return result
    }
}
