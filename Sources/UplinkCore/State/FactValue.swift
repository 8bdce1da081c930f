/// One published fact's value, spelled the same way for every reader after the usual
/// transformation of its output: the state file (`-` for none, `yes`/`no`, free text
/// percent-encoded), JSON (`null`, `true`/`false`, numbers as numbers) and the hook
/// environment (empty for none, `yes`/`no`, text as it is).
package enum FactValue: Sendable, Equatable {
    case text(String?)
    case whole(Int?)
    case flag(Bool?)
    /// A figure with one decimal, in tenths (-98.5 is -985).
    case tenths(Int?)

    /// What a fact holds, so a reader can turn a file token back into a value.
    package enum Kind: Sendable {
        case text, whole, flag, tenths
    }

    package var isNone: Bool {
        switch self {
        case .text(let value): value == nil
        case .whole(let value): value == nil
        case .flag(let value): value == nil
        case .tenths(let value): value == nil
        }
    }

    package var text: String? { if case .text(let value) = self { value } else { nil } }
    package var whole: Int? { if case .whole(let value) = self { value } else { nil } }
    package var flag: Bool? { if case .flag(let value) = self { value } else { nil } }
    /// A `tenths` value as the figure it stands for.
    package var figure: Double? { if case .tenths(let value) = self, let value { Double(value) / 10 } else { nil } }

    /// A figure rounded to tenths, as every output prints it.
    package static func figure(_ value: Double?) -> FactValue { .tenths(ModemStatus.tenths(value)) }

    /// The value spelled out (`yes`/`no`, digits, text as it is); nil for none.
    private var spelled: String? {
        switch self {
        case .text(let value): value
        case .whole(let value): value.map(String.init)
        case .flag(let value): value.map { $0 ? "yes" : "no" }
        case .tenths(let value): value.map { PrometheusText.decimal($0, scale: 1) }
        }
    }

    /// The state file's token: one field that never holds a space, a newline or a
    /// control byte, whatever the value (only text can hold them: it is percent-encoded).
    package var fileToken: String {
        guard let spelled else { return "-" }
        if case .text = self { return FactValue.percentEncoded(spelled) }
        return spelled
    }

    /// The hook environment's value (hooks see free text as it is), empty for none.
    package var environmentText: String { spelled ?? "" }

    package var json: JSONValue {
        switch self {
        case .text(let value): .optional(value)
        case .whole(let value): .number(value)
        case .flag(let value): value.map(JSONValue.bool) ?? .null
        case .tenths(let value): value.map { .fixed($0, scale: 1) } ?? .null
        }
    }

    /// A state-file token read back as a value of `kind`; nil when it is not one (a
    /// damaged or hand-edited file), which readers take as "none".
    package init?(fileToken token: String, kind: Kind) {
        if token == "-" {
            switch kind {
            case .text: self = .text(nil)
            case .whole: self = .whole(nil)
            case .flag: self = .flag(nil)
            case .tenths: self = .tenths(nil)
            }
            return
        }
        switch kind {
        case .text:
            self = .text(FactValue.percentDecoded(token))
        case .whole:
            guard let value = Int(token), value >= 0, value <= FactValue.largestWhole else { return nil }
            self = .whole(value)
        case .flag:
            guard token == "yes" || token == "no" else { return nil }
            self = .flag(token == "yes")
        case .tenths:
            guard let value = FactValue.tenths(token) else { return nil }
            self = .tenths(value)
        }
    }

    /// Larger counts are damage, not data: readers subtract and add them.
    static let largestWhole = Int(Int32.max) * 1_000_000

    /// "-98.5" as -985; at most one decimal, within a million either way.
    private static func tenths(_ token: String) -> Int? {
        let negative = token.hasPrefix("-")
        let digits = negative ? token.dropFirst() : Substring(token)
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.count <= 7,
              whole.allSatisfy(\.isASCII), let wholeValue = Int(whole) else { return nil }
        var fraction = 0
        if parts.count == 2 {
            guard parts[1].count == 1, let digit = Int(parts[1]), parts[1].allSatisfy(\.isASCII) else { return nil }
            fraction = digit
        }
        let value = wholeValue * 10 + fraction
        return negative ? -value : value
    }

    /// Free text as one field: spaces, controls, '%', non-ASCII bytes and a lone "-"
    /// (which means "none") percent-encoded.
    package static func percentEncoded(_ text: String) -> String {
        if text == "-" { return "%2D" }
        if !text.isEmpty && text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "%") }) { return text }
        var result = ""
        for byte in text.utf8 {
            if byte <= 0x20 || byte >= 0x7f || byte == UInt8(ascii: "%") {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            } else {
                result.unicodeScalars.append(UnicodeScalar(byte))
            }
        }
        return result.isEmpty ? "-" : result
    }

    /// The inverse of `percentEncoded`; a '%' not followed by two hex digits stays.
    package static func percentDecoded(_ field: String) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
               let high = hexDigit(utf8[index + 1]), let low = hexDigit(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
