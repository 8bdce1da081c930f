import Glibc
import Synchronization
import UplinkCore

/// Readable log lines on stderr (journald adds the time). Secrets never reach here:
/// callers log names and reasons, never header values or credentials.
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, notice, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        /// The sd-daemon priority (syslog's): what `journalctl -p` filters on.
        var priority: Int {
            switch self {
            case .debug: return 7
            case .info: return 6
            case .notice: return 5
            case .warning: return 4
            case .error: return 3
            }
        }

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

    /// The least important level written: the command line sets it, and a reload of
    /// `log-level` changes it while other threads may be logging, hence the atomic.
    public static var threshold: Level {
        get { Level(rawValue: thresholdStorage.load(ordering: .relaxed)) ?? .warning }
        set { thresholdStorage.store(newValue.rawValue, ordering: .relaxed) }
    }
    private static let thresholdStorage = Atomic<Int>(Level.warning.rawValue)

    /// The level a `log-level` setting names.
    public static func level(_ setting: LogLevel) -> Level {
        switch setting {
        case .debug: return .debug
        case .info: return .info
        case .notice: return .notice
        case .warning: return .warning
        case .error: return .error
        }
    }

    /// Whether stderr is the journal: lines then start with their priority (`<4>`)
    /// instead of `uplinkd: warning:`, so `journalctl -p warning -u uplinkd` works.
    /// Read once, before any thread starts (a static's initialiser runs once).
    nonisolated(unsafe) public static var toJournal = isJournal(getenv("JOURNAL_STREAM").map { String(cString: $0) },
                                                                 descriptor: STDERR_FILENO)

    /// systemd sets JOURNAL_STREAM to "DEVICE:INODE" of the stream it connected; a
    /// child that redirected stderr elsewhere inherits the variable but not the stream.
    static func isJournal(_ value: String?, descriptor: Int32) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    public static func notice(_ message: @autoclosure () -> String) { write(.notice, message) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard level >= threshold else { return }
        // One write(2) per line, so lines of the agent's threads never interleave.
        let prefix = toJournal ? "<\(level.priority)>" : "uplinkd: \(level.label): "
        let line = Array("\(prefix)\(message())\n".utf8)
        _ = line.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
