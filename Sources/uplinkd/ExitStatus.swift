import Glibc
import UplinkCore
import UplinkLinux

/// Exit statuses beyond the per-verdict ones (sysexits.h values).
enum ExitStatus {
    static let usage: Int32 = 64
    static let unavailable: Int32 = 69
    static let software: Int32 = 70
    static let configuration: Int32 = 78
}

/// A command-line mistake; the message names the argument. Exit status 64.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

func printError(_ message: String) {
    let line = Array("uplinkd: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func usageFailure(_ message: String) -> Int32 {
    printError("\(message)\nTry 'uplinkd --help'.")
    return ExitStatus.usage
}

/// The configuration, or nil after printing where it is wrong (exit status 78).
func loadConfigurationOrReport(explicitPath: String?) -> Configuration? {
    do {
        return try ConfigurationLoader(explicitPath: explicitPath).load()
    } catch {
        printError("\(error)")
        return nil
    }
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

private func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { return "/" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
