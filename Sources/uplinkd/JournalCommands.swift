import Glibc
import UplinkCore
import UplinkLinux

/// What `uplinkd history` and `availability` share: the journal named by the
/// configuration (`journal-file`, or `--journal FILE`) read back, and the words a
/// record is told in.
enum JournalCommands {
    /// The options both commands share, and the journal they name.
    struct Source {
        var configPath: String?
        var journalPath: String?
        var json = false

        /// The journal's records, and the periods still open (as of `now`); thrown:
        /// the exit status, after saying why there are none.
        func read(now: Int) throws(ExitCode) -> JournalHistory {
            var path = journalPath
            var heartbeatMilliseconds = JournalSettings().heartbeatMilliseconds
            if path == nil {
                guard let configuration = loadConfigurationOrReport(explicitPath: configPath) else {
                    throw ExitCode(ExitStatus.configuration)
                }
                guard let configured = configuration.agent.journal.path else {
                    printError("the configuration turns the journal off (journal-file = none)")
                    throw ExitCode(ExitStatus.unavailable)
                }
                path = configured
                heartbeatMilliseconds = configuration.agent.journal.heartbeatMilliseconds
            }
            do {
                // A checkpoint younger than two heartbeats is a running agent's.
                let (history, problems) = try JournalReader.read(path!, nowWallSeconds: now,
                                                                 freshSeconds: 2 * heartbeatMilliseconds / 1000)
                for problem in problems.prefix(10) { printError("skipping \(problem)") }
                if problems.count > 10 { printError("skipping \(problems.count - 10) more unreadable lines") }
                return history
            } catch {
                printError("cannot read the journal \(path!): \(error)")
                throw ExitCode(ExitStatus.unavailable)
            }
        }
    }

    /// A command's exit status when it cannot go on.
    struct ExitCode: Error {
        let value: Int32
        init(_ value: Int32) { self.value = value }
    }

    // MARK: - Words

    /// `text` followed by spaces up to `width` characters (a column of a table).
    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func localTime(_ epochSeconds: Int) -> String {
        var time = time_t(epochSeconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return String(epochSeconds) }
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
