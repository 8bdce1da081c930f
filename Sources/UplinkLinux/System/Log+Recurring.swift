import UplinkCore

/// Log lines for conditions that last and recur (`RecurringCondition`): the first
/// occurrence at its level, an hourly reminder with a count, the end as a notice; the
/// occurrences in between only at debug level.
extension Log {
    /// `condition` occurred at `now` (monotonic milliseconds); `message` says what and why.
    package static func occurred(_ condition: inout RecurringCondition, now: Int, level: Level = .warning,
                                 _ message: @autoclosure () -> String) {
        switch condition.occurred(now: now) {
        case .began:
            log(level, "\(message()) (said again at most once an hour while it lasts)")
        case .stillThere(let lasted, let since):
            log(level, "\(message()) (still, after \(DurationWords.text(milliseconds: lasted)); "
                  + "\(since) more time\(since == 1 ? "" : "s") since last said)")
        case .nothing, .ended:
            debug(message())
        }
    }

    /// `condition` is over at `now`; `message` says what works again. Logged only when
    /// the condition was there.
    package static func cleared(_ condition: inout RecurringCondition, now: Int, level: Level = .notice,
                                _ message: @autoclosure () -> String) {
        guard case .ended(let lasted, let occurrences) = condition.cleared(now: now) else { return }
        log(level, "\(message()) (after \(DurationWords.text(milliseconds: lasted)); "
              + "\(occurrences) time\(occurrences == 1 ? "" : "s"))")
    }
}
