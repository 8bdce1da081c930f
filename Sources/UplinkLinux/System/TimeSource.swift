import Glibc

/// Where the event loop and the agent read the time: the monotonic clock for every
/// timer and decision, the wall clock only to tell people when something happened.
/// Tests hand the loop a `ManualTimeSource` and move time by hand.
public protocol TimeSource: AnyObject {
    var monotonicNanoseconds: UInt64 { get }
    var wallSeconds: Int { get }
}

extension TimeSource {
    public var monotonicMilliseconds: Int { Int(monotonicNanoseconds / 1_000_000) }
}

/// The kernel's clocks (CLOCK_MONOTONIC, and time(2) for the wall clock).
public final class SystemTimeSource: TimeSource {
    public init() {}

    public var monotonicNanoseconds: UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    public var wallSeconds: Int { Int(time(nil)) }
}

/// Time that moves only when told to (`EventLoop.advance`), for tests of the
/// adapters: the way swift-nio's embedded event loop lets a test advance time.
public final class ManualTimeSource: TimeSource {
    public private(set) var monotonicNanoseconds: UInt64
    private let wallStartSeconds: Int

    public init(monotonicMilliseconds: Int = 1_000_000, wallSeconds: Int = 1_800_000_000) {
        monotonicNanoseconds = UInt64(monotonicMilliseconds) * 1_000_000
        wallStartSeconds = wallSeconds - monotonicMilliseconds / 1_000
    }

    public var wallSeconds: Int { wallStartSeconds + Int(monotonicNanoseconds / 1_000_000_000) }

    public func advance(byMilliseconds milliseconds: Int) {
        monotonicNanoseconds += UInt64(max(0, milliseconds)) * 1_000_000
    }
}
