import Glibc

/// Readable log lines on stderr (journald adds the time). Secrets never reach here:
/// callers log names and reasons, never header values or credentials.
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, notice, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        var label: String {
            switch self {
            case .debug: return "debug"
            case .info: return "info"
            case .notice: return "notice"
            case .warning: return "warning"
            case .error: return "error"
            }
        }
    }

    /// The least important level written. nonisolated(unsafe): the command line sets it
    /// once, before the agent or any other thread starts, and it is only read after.
    nonisolated(unsafe) public static var threshold: Level = .warning

    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    public static func notice(_ message: @autoclosure () -> String) { write(.notice, message) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard level >= threshold else { return }
        // One write(2) per line, so lines of the agent's threads never interleave.
        let line = Array("uplinkd: \(level.label): \(message())\n".utf8)
        _ = line.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
