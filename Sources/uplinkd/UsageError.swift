import Glibc
import UplinkCore

/// A command-line mistake; the message names the argument. Exit status 64.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// An absolute path from an option's value (relative ones are taken from the current
/// directory), without "..".
func pathValue(_ option: String, _ value: String) throws(UsageError) -> String {
    do {
        return try ValueParser.absolutePath(value.hasPrefix("/") ? value : currentDirectory() + "/" + value)
    } catch {
        throw UsageError("\(option): \(error.message)")
    }
}

/// The one IFACE operand of a command (`plan`, `history`): nil when `argument` is an
/// option or a second operand, which the command then refuses as unknown.
func interfaceOperand(_ argument: String, given: InterfaceName?) throws(UsageError) -> InterfaceName? {
    guard !argument.hasPrefix("-"), given == nil else { return nil }
    guard let name = InterfaceName(argument) else {
        throw UsageError("'\(argument.printableEscaped)' is not an interface name")
    }
    return name
}

private func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { return "/" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
