/// A D-Bus value as the adapter read it off a message: pure Swift, so the core can
/// interpret ModemManager's properties without the bus library. Dictionaries keep
/// their order; every reader bounds depth and size before it builds one of these.
package indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor's presence (its number means nothing outside the message).
    case unixFD
    case array([DBusValue])
    case dictionary([(key: DBusValue, value: DBusValue)])
    case structure([DBusValue])
    case variant(DBusValue)

    package static func == (a: DBusValue, b: DBusValue) -> Bool {
        switch (a, b) {
        case (.byte(let x), .byte(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.int16(let x), .int16(let y)): return x == y
        case (.uint16(let x), .uint16(let y)): return x == y
        case (.int32(let x), .int32(let y)): return x == y
        case (.uint32(let x), .uint32(let y)): return x == y
        case (.int64(let x), .int64(let y)): return x == y
        case (.uint64(let x), .uint64(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.string(let x), .string(let y)), (.objectPath(let x), .objectPath(let y)),
             (.signature(let x), .signature(let y)): return x == y
        case (.unixFD, .unixFD): return true
        case (.array(let x), .array(let y)), (.structure(let x), .structure(let y)): return x == y
        case (.dictionary(let x), .dictionary(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.variant(let x), .variant(let y)): return x == y
        default: return false
        }
    }

    /// The value inside any variants.
    package var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    package var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text): return text
        default: return nil
        }
    }

    /// Any integer type, as an Int (nil when it does not fit).
    package var integer: Int? {
        switch unwrapped {
        case .byte(let value): return Int(value)
        case .int16(let value): return Int(value)
        case .uint16(let value): return Int(value)
        case .int32(let value): return Int(value)
        case .uint32(let value): return Int(value)
        case .int64(let value): return Int(value)
        case .uint64(let value): return Int(exactly: value)
        default: return nil
        }
    }

    package var double: Double? {
        if case .double(let value) = unwrapped, value.isFinite { return value }
        return nil
    }

    package var bool: Bool? {
        if case .bool(let value) = unwrapped { return value }
        return nil
    }

    package var array: [DBusValue]? {
        if case .array(let values) = unwrapped { return values }
        return nil
    }

    package var structure: [DBusValue]? {
        if case .structure(let values) = unwrapped { return values }
        return nil
    }

    /// A dictionary with string (or object path) keys, the shape of `a{sv}` and
    /// `a{oa{sv}}`; later duplicates win.
    package var properties: [String: DBusValue]? {
        guard case .dictionary(let pairs) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for pair in pairs {
            guard let key = pair.key.string else { continue }
            result[key] = pair.value
        }
        return result
    }
}
