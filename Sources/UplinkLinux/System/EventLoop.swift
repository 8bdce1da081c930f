import CLinuxShim
import Glibc

/// The single-threaded event loop that owns every file descriptor and timer of the
/// process (epoll for readiness, a sorted timer list for deadlines). Nothing here is
/// shared between threads, so no C state needs a lock.
///
/// Time comes from a `TimeSource`: the system clocks normally; in tests a manual one,
/// moved with `advance(byMilliseconds:)`, which fires the timers that came due.
package final class EventLoop {
    /// What a watcher wants to hear about.
    package struct Interest: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package static let readable = Interest(rawValue: EPOLLIN.rawValue)
        package static let writable = Interest(rawValue: EPOLLOUT.rawValue)
    }

    /// What happened on a descriptor.
    package struct Readiness: Sendable {
        package let readable: Bool
        package let writable: Bool
        /// Error or hang-up: the owner should read to learn more, or drop the descriptor.
        package let failed: Bool
    }

    package typealias TimerID = Int

    package let time: TimeSource
    private let epoll: FileDescriptor
    private var watchers: [Int32: (Readiness) -> Void] = [:]
    private var timers: [(deadlineNanoseconds: UInt64, id: TimerID, action: () -> Void)] = []
    private var nextTimerID = 1
    private var stopping = false
    /// Work handed in from other threads (the embedding API): the only state here that
    /// another thread touches, so the only lock. It guards this Swift array, never C state.
    private var inbox: [() -> Void] = []
    private let inboxLock = Lock()
    private var wake: FileDescriptor?

    package init(time: TimeSource = SystemTimeSource()) throws(SystemError) {
        self.time = time
        epoll = FileDescriptor(owning: try Syscall.call("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
    }

    /// Monotonic milliseconds now, as this loop's time source says.
    package var nowMilliseconds: Int { time.monotonicMilliseconds }

    /// Prepares `post` for use from other threads. Call on the loop's thread before
    /// handing the loop to another thread.
    package func enableCrossThreadPosting() throws(SystemError) {
        guard wake == nil else { return }
        let wake = FileDescriptor(owning: try Syscall.call("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) })
        self.wake = wake
        try watch(wake.rawValue, for: .readable) { [unowned self] _ in
            var counter: UInt64 = 0
            _ = read(wake.rawValue, &counter, 8)
            runPosted()
        }
    }

    /// Runs `work` on the loop's thread soon. Safe from any thread once
    /// `enableCrossThreadPosting` was called.
    package func post(_ work: @escaping () -> Void) {
        inboxLock.withLock { inbox.append(work) }
        var one: UInt64 = 1
        if let wake { _ = write(wake.rawValue, &one, 8) }
    }

    private func runPosted() {
        let work = inboxLock.withLock {
            defer { inbox.removeAll() }
            return inbox
        }
        for item in work { item() }
    }

    /// Starts or changes watching `descriptor`. The handler runs on this loop.
    package func watch(_ descriptor: Int32, for interest: Interest,
                      handler: @escaping (Readiness) -> Void) throws(SystemError) {
        var event = epoll_event()
        event.events = interest.rawValue
        event.data.fd = descriptor
        if watchers[descriptor] == nil || epoll_ctl(epoll.rawValue, EPOLL_CTL_MOD, descriptor, &event) != 0 {
            // A watched descriptor closed without `unwatch` left the epoll set with its
            // close (ENOENT on MOD): its number, reused by a new descriptor, is added.
            guard watchers[descriptor] == nil || errno == ENOENT else {
                throw SystemError("epoll_ctl on descriptor \(descriptor)", errno: errno)
            }
            try Syscall.call("epoll_ctl on descriptor \(descriptor)") { epoll_ctl(epoll.rawValue, EPOLL_CTL_ADD, descriptor, &event) }
        }
        watchers[descriptor] = handler
    }

    package func unwatch(_ descriptor: Int32) {
        guard watchers.removeValue(forKey: descriptor) != nil else { return }
        // ENOENT/EBADF after the descriptor was closed is harmless: the kernel already
        // dropped it from the epoll set.
        epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, descriptor, nil)
    }

    @discardableResult
    package func schedule(afterMilliseconds delay: Int, _ action: @escaping () -> Void) -> TimerID {
        let id = nextTimerID
        nextTimerID += 1
        let deadline = time.monotonicNanoseconds + UInt64(max(0, delay)) * 1_000_000
        let position = timers.firstIndex { $0.deadlineNanoseconds > deadline } ?? timers.endIndex
        timers.insert((deadline, id, action), at: position)
        return id
    }

    package func cancel(_ id: TimerID) {
        timers.removeAll { $0.id == id }
    }

    /// Asks `run` to return after the current iteration.
    package func stop() { stopping = true }

    /// Whether `stop()` was called since `run` last started.
    package var isStopping: Bool { stopping }

    /// Runs until `stop()` is called, or until nothing is watched or scheduled.
    package func run() throws(SystemError) {
        stopping = false
        while !stopping && (!watchers.isEmpty || !timers.isEmpty) {
            try turn(timeoutMilliseconds: millisecondsUntilNextTimer())
        }
    }

    /// Moves a manual time source forward and runs what came due on the way, in
    /// deadline order, with ready descriptors and posted work: a test's `run`.
    package func advance(byMilliseconds milliseconds: Int) throws(SystemError) {
        guard let manual = time as? ManualTimeSource else {
            preconditionFailure("advance(byMilliseconds:) needs a ManualTimeSource")
        }
        let target = manual.monotonicNanoseconds + UInt64(max(0, milliseconds)) * 1_000_000
        while true {
            try turn(timeoutMilliseconds: 0)
            runPosted()
            guard let next = timers.first?.deadlineNanoseconds, next <= target else { break }
            if next > manual.monotonicNanoseconds {
                manual.advance(byMilliseconds: Int((next - manual.monotonicNanoseconds + 999_999) / 1_000_000))
            }
        }
        if target > manual.monotonicNanoseconds {
            manual.advance(byMilliseconds: Int((target - manual.monotonicNanoseconds) / 1_000_000))
        }
        try turn(timeoutMilliseconds: 0)
    }

    /// One iteration: wait for readiness up to `timeoutMilliseconds` (-1: no limit),
    /// run the handlers, then the timers that are due.
    private func turn(timeoutMilliseconds: Int32) throws(SystemError) {
        var events = [epoll_event](repeating: epoll_event(), count: 32)
        let count = try Syscall.call("epoll_wait") {
            epoll_wait(epoll.rawValue, &events, Int32(events.count), timeoutMilliseconds)
        }
        for index in 0..<Int(count) {
            let event = events[index]
            let descriptor = event.data.fd
            // A handler earlier in this batch may have unwatched this descriptor.
            guard let handler = watchers[descriptor] else { continue }
            let flags = event.events
            handler(Readiness(readable: flags & EPOLLIN.rawValue != 0,
                              writable: flags & EPOLLOUT.rawValue != 0,
                              failed: flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0))
        }
        fireDueTimers()
    }

    private func millisecondsUntilNextTimer() -> Int32 {
        guard let first = timers.first else { return -1 }
        let now = time.monotonicNanoseconds
        guard first.deadlineNanoseconds > now else { return 0 }
        // Round up so we never wake a moment early and spin.
        let milliseconds = (first.deadlineNanoseconds - now + 999_999) / 1_000_000
        return Int32(min(milliseconds, UInt64(Int32.max)))
    }

    private func fireDueTimers() {
        let now = time.monotonicNanoseconds
        while let first = timers.first, first.deadlineNanoseconds <= now {
            timers.removeFirst()
            first.action()
        }
    }
}
