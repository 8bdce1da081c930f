import CSystemd
import CSystemdShim
import UplinkCore

/// Reading D-Bus messages into `DBusValue`s and writing them back, over sd-bus's
/// non-variadic calls. Reads are bounded whatever the sender puts in a message (the
/// bus allows 128 MiB): nesting depth, element count and string length.
enum BusMessage {
    static let maximumDepth = 16
    static let maximumElements = 20_000
    static let maximumStringBytes = 4_096

    /// Every remaining argument of `message`; nil when it is malformed or over a bound.
    static func read(_ message: OpaquePointer) -> [DBusValue]? {
        var budget = maximumElements
        var values: [DBusValue] = []
        while let value = readNext(message, depth: 0, budget: &budget) {
            guard case .value(let read) = value else { return values }
            values.append(read)
        }
        return nil
    }

    private enum Next {
        case value(DBusValue)
        case end
    }

    private static func readNext(_ message: OpaquePointer, depth: Int, budget: inout Int) -> Next? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(message, &type, &contents)
        guard peeked >= 0 else { return nil }
        if peeked == 0 { return .end }
        budget -= 1
        guard budget >= 0, depth <= maximumDepth else { return nil }
        switch Int32(type) {
        case Int32(UPLINKD_BUS_ARRAY), Int32(UPLINKD_BUS_STRUCT), Int32(UPLINKD_BUS_VARIANT), Int32(UPLINKD_BUS_DICT_ENTRY):
            return readContainer(message, type: type, contents: contents, depth: depth, budget: &budget).map(Next.value)
        default:
            return readBasic(message, type: type).map(Next.value)
        }
    }

    private static func readContainer(_ message: OpaquePointer, type: CChar, contents: UnsafePointer<CChar>?,
                                      depth: Int, budget: inout Int) -> DBusValue? {
        guard sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
        var items: [DBusValue] = []
        while true {
            guard let next = readNext(message, depth: depth + 1, budget: &budget) else { return nil }
            guard case .value(let item) = next else { break }
            items.append(item)
        }
        guard sd_bus_message_exit_container(message) >= 0 else { return nil }
        switch Int32(type) {
        case Int32(UPLINKD_BUS_VARIANT):
            return items.count == 1 ? .variant(items[0]) : nil
        case Int32(UPLINKD_BUS_STRUCT):
            return .structure(items)
        case Int32(UPLINKD_BUS_DICT_ENTRY):
            // Read as a two-member structure; the array around it makes the dictionary.
            return items.count == 2 ? .structure(items) : nil
        default:
            let isDictionary = contents.map { $0.pointee == CChar(UPLINKD_BUS_DICT_ENTRY) || $0.pointee == CChar(UInt8(ascii: "{")) } ?? false
            guard isDictionary else { return .array(items) }
            return .dictionary(items.compactMap { entry in
                guard case .structure(let pair) = entry, pair.count == 2 else { return nil }
                return (pair[0], pair[1])
            })
        }
    }

    private static func readBasic(_ message: OpaquePointer, type: CChar) -> DBusValue? {
        func read<T: BitwiseCopyable>(_ initial: T) -> T? {
            var value = initial
            return sd_bus_message_read_basic(message, type, &value) > 0 ? value : nil
        }
        switch Int32(type) {
        case Int32(UPLINKD_BUS_BYTE): return read(UInt8(0)).map(DBusValue.byte)
        case Int32(UPLINKD_BUS_BOOLEAN): return read(Int32(0)).map { .bool($0 != 0) }
        case Int32(UPLINKD_BUS_INT16): return read(Int16(0)).map(DBusValue.int16)
        case Int32(UPLINKD_BUS_UINT16): return read(UInt16(0)).map(DBusValue.uint16)
        case Int32(UPLINKD_BUS_INT32): return read(Int32(0)).map(DBusValue.int32)
        case Int32(UPLINKD_BUS_UINT32): return read(UInt32(0)).map(DBusValue.uint32)
        case Int32(UPLINKD_BUS_INT64): return read(Int64(0)).map(DBusValue.int64)
        case Int32(UPLINKD_BUS_UINT64): return read(UInt64(0)).map(DBusValue.uint64)
        case Int32(UPLINKD_BUS_DOUBLE): return read(Double(0)).map(DBusValue.double)
        case Int32(UPLINKD_BUS_UNIX_FD): return read(Int32(0)).map { _ in .unixFD }
        case Int32(UPLINKD_BUS_STRING), Int32(UPLINKD_BUS_OBJECT_PATH), Int32(UPLINKD_BUS_SIGNATURE):
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, type, &pointer) > 0, let pointer else { return nil }
            let bytes = UnsafeBufferPointer(start: pointer, count: strnlen(pointer, maximumStringBytes))
            let text = String(decoding: bytes.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            switch Int32(type) {
            case Int32(UPLINKD_BUS_OBJECT_PATH): return .objectPath(text)
            case Int32(UPLINKD_BUS_SIGNATURE): return .signature(text)
            default: return .string(text)
            }
        default:
            return nil
        }
    }

    // MARK: writing

    /// Appends `value`; false when its type cannot be written (an empty array of
    /// unknown type, a descriptor).
    @discardableResult
    static func append(_ value: DBusValue, to message: OpaquePointer) -> Bool {
        func basic<T: BitwiseCopyable>(_ code: Int, _ value: T) -> Bool {
            var copy = value
            return sd_bus_message_append_basic(message, CChar(code), &copy) >= 0
        }
        switch value {
        case .byte(let v): return basic(UPLINKD_BUS_BYTE, v)
        case .bool(let v): return basic(UPLINKD_BUS_BOOLEAN, Int32(v ? 1 : 0))
        case .int16(let v): return basic(UPLINKD_BUS_INT16, v)
        case .uint16(let v): return basic(UPLINKD_BUS_UINT16, v)
        case .int32(let v): return basic(UPLINKD_BUS_INT32, v)
        case .uint32(let v): return basic(UPLINKD_BUS_UINT32, v)
        case .int64(let v): return basic(UPLINKD_BUS_INT64, v)
        case .uint64(let v): return basic(UPLINKD_BUS_UINT64, v)
        case .double(let v): return basic(UPLINKD_BUS_DOUBLE, v)
        case .string(let text), .objectPath(let text), .signature(let text):
            let code = if case .objectPath = value { UPLINKD_BUS_OBJECT_PATH }
                else if case .signature = value { UPLINKD_BUS_SIGNATURE } else { UPLINKD_BUS_STRING }
            return text.withCString { sd_bus_message_append_basic(message, CChar(code), $0) >= 0 }
        case .unixFD:
            return false
        case .variant(let inner):
            guard let signature = inner.signature else { return false }
            return container(UPLINKD_BUS_VARIANT, signature, message) { append(inner, to: message) }
        case .structure(let members):
            guard let signature = value.signature else { return false }
            return container(UPLINKD_BUS_STRUCT, String(signature.dropFirst().dropLast()), message) {
                members.allSatisfy { append($0, to: message) }
            }
        case .array(let items):
            guard let signature = value.signature else { return false }
            return container(UPLINKD_BUS_ARRAY, String(signature.dropFirst()), message) {
                items.allSatisfy { append($0, to: message) }
            }
        case .dictionary(let pairs):
            guard let signature = value.signature else { return false }
            let entry = String(signature.dropFirst())
            return container(UPLINKD_BUS_ARRAY, entry, message) {
                pairs.allSatisfy { pair in
                    container(UPLINKD_BUS_DICT_ENTRY, String(entry.dropFirst().dropLast()), message) {
                        append(pair.key, to: message) && append(pair.value, to: message)
                    }
                }
            }
        }
    }

    private static func container(_ code: Int, _ contents: String, _ message: OpaquePointer, _ body: () -> Bool) -> Bool {
        guard contents.withCString({ sd_bus_message_open_container(message, CChar(code), $0) }) >= 0, body() else { return false }
        return sd_bus_message_close_container(message) >= 0
    }
}

extension DBusValue {
    /// The D-Bus signature of the value (nil for an empty array or dictionary, whose
    /// element type cannot be known from its contents, and for descriptors).
    var signature: String? {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return nil
        case .variant: return "v"
        case .structure(let members):
            let inner = members.compactMap(\.signature)
            return inner.count == members.count && !members.isEmpty ? "(" + inner.joined() + ")" : nil
        case .array(let items):
            guard let first = items.first?.signature, items.allSatisfy({ $0.signature == first }) else { return nil }
            return "a" + first
        case .dictionary(let pairs):
            guard let key = pairs.first?.key.signature, let value = pairs.first?.value.signature,
                  pairs.allSatisfy({ $0.key.signature == key && $0.value.signature == value }) else { return nil }
            return "a{" + key + value + "}"
        }
    }
}
