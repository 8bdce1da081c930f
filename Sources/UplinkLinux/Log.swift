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

    nonisolated(unsafe) public static var threshold: Level = .warning
    /// Prefix of each line ("uplinkd" or "uplinkd[PID]").
    nonisolated(unsafe) public static var tag = "uplinkd"

    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    public static func notice(_ message: @autoclosure () -> String) { write(.notice, message) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard level >= threshold else { return }
        fputs("\(tag): \(level.label): \(message())\n", stderr)
    }
}
