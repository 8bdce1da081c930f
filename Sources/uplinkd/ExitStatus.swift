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

/// The state file, or nil after printing why it cannot be read (`status` and `plan`
/// exit 69 then), with a hint when the agent may simply not be running.
func readStateOrReport(_ path: String) -> AgentState? {
    do {
        return try StateFileReader.read(path)
    } catch {
        switch error {
        case .unreadable(let error): printError("cannot read state file \(path): \(error); is 'uplinkd run' running?")
        case .malformed(let error): printError("state file \(path): \(error)")
        }
        return nil
    }
}
