/// Bytes spent on probes by one uplink, per day, against an optional budget (metered
/// links cost money). The day is a 24-hour window from the first probe, on monotonic
/// time, so clock changes cannot reset or stretch it.
package struct ByteBudget: Sendable, Equatable {
    package static let dayMilliseconds = 86_400_000

    package var limitBytes: Int?
    package private(set) var spentBytes = 0
    package private(set) var windowStartMilliseconds: Int?
    /// All bytes since start, for statistics.
    package private(set) var totalBytes = 0

    package init(limitBytes: Int?) {
        self.limitBytes = limitBytes
    }

    package mutating func record(_ bytes: Int, at now: Int) {
        rollWindow(at: now)
        if windowStartMilliseconds == nil { windowStartMilliseconds = now }
        spentBytes += bytes
        totalBytes += bytes
    }

    /// Whether periodic probing may go on (link-event probes always may).
    package mutating func allowsPeriodicProbe(at now: Int) -> Bool {
        rollWindow(at: now)
        guard let limitBytes else { return true }
        return spentBytes < limitBytes
    }

    /// When the current 24-hour window ends, if one has started.
    package var windowEndMilliseconds: Int? {
        windowStartMilliseconds.map { $0 + ByteBudget.dayMilliseconds }
    }

    /// Bytes spent in the window that holds `now` (0 once it has rolled over).
    package func spentBytes(at now: Int) -> Int {
        var copy = self
        copy.rollWindow(at: now)
        return copy.spentBytes
    }

    package func isExhausted(at now: Int) -> Bool {
        var copy = self
        return !copy.allowsPeriodicProbe(at: now)
    }

    private mutating func rollWindow(at now: Int) {
        guard let start = windowStartMilliseconds, now - start >= ByteBudget.dayMilliseconds else { return }
        let days = (now - start) / ByteBudget.dayMilliseconds
        windowStartMilliseconds = start + days * ByteBudget.dayMilliseconds
        spentBytes = 0
    }
}
