/// A source of uniform random integers: `random(n)` is in `0..<n`. The adapter
/// passes the system generator; tests pass fixed sequences.
package typealias RandomSource = (Int) -> Int

/// When to try the broker again: 1 s after the first failure, doubling to at most
/// 10 minutes, each delay drawn from its upper half ("equal jitter"), so a fleet that
/// lost its broker at the same moment does not come back at the same moment.
package struct ReconnectBackoff: Sendable, Equatable {
    package var initialMilliseconds: Int
    package var maximumMilliseconds: Int
    /// Failed attempts since the last successful connection.
    package private(set) var failures = 0

    package init(initialMilliseconds: Int = 1_000, maximumMilliseconds: Int = 600_000) {
        self.initialMilliseconds = initialMilliseconds
        self.maximumMilliseconds = maximumMilliseconds
    }

    /// The ceiling of the next delay, before jitter.
    package var ceilingMilliseconds: Int {
        var ceiling = initialMilliseconds
        for _ in 0..<min(failures, 40) where ceiling < maximumMilliseconds { ceiling *= 2 }
        return min(ceiling, maximumMilliseconds)
    }

    /// The delay before the next attempt; counts a failure.
    package mutating func nextDelayMilliseconds(random: RandomSource) -> Int {
        let ceiling = ceilingMilliseconds
        failures += 1
        let half = ceiling / 2
        return ceiling - half + random(half + 1)
    }

    /// A connection was made: the next failure starts from the initial delay.
    package mutating func reset() { failures = 0 }
}
