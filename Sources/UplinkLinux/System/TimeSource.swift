import Glibc

/// Where the event loop and the agent read the time: the monotonic clock for every
/// timer and decision, the wall clock only to tell people when something happened.
/// Tests hand the loop a `ManualTimeSource` and move time by hand.
package protocol TimeSource: AnyObject {
    var monotonicNanoseconds: UInt64 { get }
    var wallSeconds: Int { get }
}

extension TimeSource {
    package var monotonicMilliseconds: Int { Int(monotonicNanoseconds / 1_000_000) }
}

/// The kernel's clocks (CLOCK_MONOTONIC, and time(2) for the wall clock).
package final class SystemTimeSource: TimeSource {
    package init() {}

    package var monotonicNanoseconds: UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    package var wallSeconds: Int { Int(time(nil)) }
}

/// Time that moves only when told to (`EventLoop.advance`), for tests of the
/// adapters: the way swift-nio's embedded event loop lets a test advance time.
package final class ManualTimeSource: TimeSource {
    package private(set) var monotonicNanoseconds: UInt64
    private let wallStartSeconds: Int

    package init(monotonicMilliseconds: Int = 1_000_000, wallSeconds: Int = 1_800_000_000) {
        monotonicNanoseconds = UInt64(monotonicMilliseconds) * 1_000_000
        wallStartSeconds = wallSeconds - monotonicMilliseconds / 1_000
    }

    package var wallSeconds: Int { wallStartSeconds + Int(monotonicNanoseconds / 1_000_000_000) }

    package func advance(byMilliseconds milliseconds: Int) {
        monotonicNanoseconds += UInt64(max(0, milliseconds)) * 1_000_000
    }
}
