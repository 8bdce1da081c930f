/// A moment as the agent sees it: monotonic time for every decision, wall-clock time
/// only to tell people when something happened.
package struct Instant: Sendable, Equatable {
    package var monotonicMilliseconds: Int
    package var wallSeconds: Int

    package init(monotonicMilliseconds: Int, wallSeconds: Int) {
        self.monotonicMilliseconds = monotonicMilliseconds
        self.wallSeconds = wallSeconds
    }

    package func adding(milliseconds: Int) -> Instant {
        Instant(monotonicMilliseconds: monotonicMilliseconds + milliseconds,
                wallSeconds: wallSeconds + milliseconds / 1_000)
    }
}
