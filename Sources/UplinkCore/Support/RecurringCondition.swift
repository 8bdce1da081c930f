/// A condition that can last for hours while it recurs every few seconds (no system
/// bus, ModemManager absent, a broker refusing, a file that cannot be written), and
/// which of its occurrences deserve a log line: the first, one reminder an hour at
/// most while it lasts (counting the occurrences in between), and its end. A gateway
/// without a system bus would otherwise write the same line thousands of times a day
/// to a journal on small flash. Time comes in as monotonic milliseconds.
package struct RecurringCondition: Sendable, Equatable {
    /// What to log about an occurrence or an end.
    package enum Telling: Sendable, Equatable {
        /// Nothing: it was told less than an hour ago (or it was not there to end).
        case nothing
        /// It began: tell it, with its detail.
        case began
        /// Still there an hour or more after it was last told: tell it again with how
        /// long it has lasted and how often it came back since it was last told.
        case stillThere(lastedMilliseconds: Int, occurrencesSinceTold: Int)
        /// It ended: tell how long it lasted and how often it occurred in all.
        case ended(lastedMilliseconds: Int, occurrences: Int)
    }

    /// Least time between two lines about one lasting condition.
    package static let reminderIntervalMilliseconds = 3_600_000

    private var beganMilliseconds: Int?
    private var toldMilliseconds = 0
    private var occurrences = 0
    private var occurrencesSinceTold = 0

    package init() {}

    /// Whether the condition is there now (it occurred and has not ended since).
    package var isPresent: Bool { beganMilliseconds != nil }

    /// The condition occurred (again) at `now`.
    package mutating func occurred(now: Int) -> Telling {
        guard let began = beganMilliseconds else {
            beganMilliseconds = now
            toldMilliseconds = now
            occurrences = 1
            occurrencesSinceTold = 0
            return .began
        }
        occurrences += 1
        occurrencesSinceTold += 1
        guard now - toldMilliseconds >= Self.reminderIntervalMilliseconds else { return .nothing }
        let since = occurrencesSinceTold
        toldMilliseconds = now
        occurrencesSinceTold = 0
        return .stillThere(lastedMilliseconds: now - began, occurrencesSinceTold: since)
    }

    /// The condition is over at `now` (the bus reached, the file written): `.ended`
    /// when it was there, else nothing.
    package mutating func cleared(now: Int) -> Telling {
        guard let began = beganMilliseconds else { return .nothing }
        let telling = Telling.ended(lastedMilliseconds: now - began, occurrences: occurrences)
        self = RecurringCondition()
        return telling
    }
}
