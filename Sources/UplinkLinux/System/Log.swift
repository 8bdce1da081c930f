import Glibc
import Synchronization
import UplinkCore

/// Readable log lines on stderr (journald adds the time). Secrets never reach here:
/// callers log names and reasons, never header values or credentials.
package enum Log {
    /// The levels of `log-level`, as syslog names them.
    package typealias Level = LogLevel

    /// The least important level written: the command line sets it, and a reload of
    /// `log-level` changes it while other threads may be logging, hence the atomic
    /// (holding the level's syslog priority).
    package static var threshold: Level {
        get {
            let priority = thresholdPriority.load(ordering: .relaxed)
            return Level.allCases.first { $0.syslogPriority == priority } ?? .warning
        }
        set { thresholdPriority.store(newValue.syslogPriority, ordering: .relaxed) }
    }
    private static let thresholdPriority = Atomic<Int>(Level.warning.syslogPriority)

    /// Whether stderr is the journal: lines then start with their priority (`<4>`)
    /// instead of `uplinkd: warning:`, so `journalctl -p warning -u uplinkd` works.
    /// Read once, before any thread starts (a static's initialiser runs once).
    nonisolated(unsafe) package static var toJournal = isJournal(getenv("JOURNAL_STREAM").map { String(cString: $0) },
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

    package static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    package static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    package static func notice(_ message: @autoclosure () -> String) { write(.notice, message) }
    package static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    package static func error(_ message: @autoclosure () -> String) { write(.error, message) }
    package static func log(_ level: Level, _ message: @autoclosure () -> String) { write(level, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard level.syslogPriority <= thresholdPriority.load(ordering: .relaxed) else { return }
        // One write(2) per line, so lines of the agent's threads never interleave.
        let prefix = toJournal ? "<\(level.syslogPriority)>" : "uplinkd: \(level.rawValue): "
        let line = Array("\(prefix)\(message())\n".utf8)
        _ = line.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
