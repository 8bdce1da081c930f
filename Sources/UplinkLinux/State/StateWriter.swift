import Glibc
import UplinkCore

/// Publishes the agent's state file: replaced atomically (`AtomicFile`) and only when
/// its content changed, in a directory created with mode 0755 if missing.
package final class StateWriter {
    package let path: String
    private var lastWritten: (state: AgentState, format: Int)?
    /// Monotonic milliseconds, for how often a lasting failure is logged.
    private let clock: () -> Int
    private var unwritable = RecurringCondition()

    package init(path: String, clock: @escaping () -> Int) {
        self.path = path
        self.clock = clock
    }

    /// Makes ready to write: refuses a path that is a directory and removes temporary
    /// files of agents that were killed mid-write (`AtomicFile.prepare`).
    package func prepare() throws(SystemError) {
        try AtomicFile.prepare(path, what: "state file")
    }

    /// Writes `state` in `format` (`[agent] state-format`) unless the file already says
    /// the same. Errors are returned, not fatal: the agent keeps running and tries again
    /// on the next change (a lasting failure is logged as a `RecurringCondition`).
    @discardableResult
    package func publish(_ state: AgentState, format: Int = StateFileFormat.version) -> SystemError? {
        if let lastWritten, lastWritten.format == format, lastWritten.state.sameContent(as: state) { return nil }
        do {
            try AtomicFile.replace(path, with: StateFileFormat.encode(state, format: format))
            lastWritten = (state, format)
            Log.cleared(&unwritable, now: clock(), "state file \(path) written again")
            return nil
        } catch {
            Log.occurred(&unwritable, now: clock(), "writing state file: \(error)")
            return error
        }
    }
}
