/// A moment as the agent sees it: monotonic time for every decision, wall-clock time
/// only to tell people when something happened.
public struct Instant: Sendable, Equatable {
    public var monotonicMilliseconds: Int
    public var wallSeconds: Int

    public init(monotonicMilliseconds: Int, wallSeconds: Int) {
        self.monotonicMilliseconds = monotonicMilliseconds
        self.wallSeconds = wallSeconds
    }

    public func adding(milliseconds: Int) -> Instant {
        Instant(monotonicMilliseconds: monotonicMilliseconds + milliseconds,
                wallSeconds: wallSeconds + milliseconds / 1_000)
    }
}
