import CUplinkShim
import Glibc

/// The single-threaded event loop that owns every file descriptor and timer of the
/// process (epoll for readiness, a sorted timer list for deadlines). Nothing here is
/// shared between threads, so no C state needs a lock.
public final class EventLoop {
    /// What a watcher wants to hear about.
    public struct Interest: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = Interest(rawValue: EPOLLIN.rawValue)
        public static let writable = Interest(rawValue: EPOLLOUT.rawValue)
    }

    /// What happened on a descriptor.
    public struct Readiness: Sendable {
        public let readable: Bool
        public let writable: Bool
        /// Error or hang-up: the owner should read to learn more, or drop the descriptor.
        public let failed: Bool
    }

    public typealias TimerID = Int

    private let epollDescriptor: Int32
    private var watchers: [Int32: (Readiness) -> Void] = [:]
    private var timers: [(deadlineNanoseconds: UInt64, id: TimerID, action: () -> Void)] = []
    private var nextTimerID = 1
    private var stopping = false
    /// Work handed in from other threads (the embedding API): the only state here that
    /// another thread touches, so the only lock. It guards this Swift array, never C state.
    private var inbox: [() -> Void] = []
    private var inboxLock = pthread_mutex_t()
    private var wakeDescriptor: Int32 = -1

    public init() throws(SystemError) {
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollDescriptor >= 0 else { throw SystemError("epoll_create1") }
        pthread_mutex_init(&inboxLock, nil)
    }

    deinit {
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
        pthread_mutex_destroy(&inboxLock)
        close(epollDescriptor)
    }

    /// Prepares `post` for use from other threads. Call on the loop's thread before
    /// handing the loop to another thread.
    public func enableCrossThreadPosting() throws(SystemError) {
        guard wakeDescriptor < 0 else { return }
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else { throw SystemError("eventfd") }
        wakeDescriptor = descriptor
        try watch(descriptor, for: .readable) { [unowned self] _ in
            var counter: UInt64 = 0
            _ = read(descriptor, &counter, 8)
            pthread_mutex_lock(&inboxLock)
            let work = inbox
            inbox.removeAll()
            pthread_mutex_unlock(&inboxLock)
            for item in work { item() }
        }
    }

    /// Runs `work` on the loop's thread soon. Safe from any thread once
    /// `enableCrossThreadPosting` was called.
    public func post(_ work: @escaping () -> Void) {
        pthread_mutex_lock(&inboxLock)
        inbox.append(work)
        pthread_mutex_unlock(&inboxLock)
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    /// Starts or changes watching `descriptor`. The handler runs on this loop.
    public func watch(_ descriptor: Int32, for interest: Interest,
                      handler: @escaping (Readiness) -> Void) throws(SystemError) {
        var event = epoll_event()
        event.events = interest.rawValue
        event.data.fd = descriptor
        let operation = watchers[descriptor] == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        guard epoll_ctl(epollDescriptor, operation, descriptor, &event) == 0 else {
            throw SystemError("epoll_ctl on descriptor \(descriptor)")
        }
        watchers[descriptor] = handler
    }

    public func unwatch(_ descriptor: Int32) {
        guard watchers.removeValue(forKey: descriptor) != nil else { return }
        // ENOENT/EBADF after the descriptor was closed is harmless: the kernel already
        // dropped it from the epoll set.
        epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, descriptor, nil)
    }

    @discardableResult
    public func schedule(afterMilliseconds delay: Int, _ action: @escaping () -> Void) -> TimerID {
        let id = nextTimerID
        nextTimerID += 1
        let deadline = MonotonicClock.nowNanoseconds() + UInt64(max(0, delay)) * 1_000_000
        let position = timers.firstIndex { $0.deadlineNanoseconds > deadline } ?? timers.endIndex
        timers.insert((deadline, id, action), at: position)
        return id
    }

    public func cancel(_ id: TimerID) {
        timers.removeAll { $0.id == id }
    }

    /// Asks `run` to return after the current iteration.
    public func stop() { stopping = true }

    /// Runs until `stop()` is called, or until nothing is watched or scheduled.
    public func run() throws(SystemError) {
        stopping = false
        var events = [epoll_event](repeating: epoll_event(), count: 32)
        while !stopping && (!watchers.isEmpty || !timers.isEmpty) {
            let timeout = millisecondsUntilNextTimer()
            let count = epoll_wait(epollDescriptor, &events, Int32(events.count), timeout)
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError("epoll_wait")
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
    }

    private func millisecondsUntilNextTimer() -> Int32 {
        guard let first = timers.first else { return -1 }
        let now = MonotonicClock.nowNanoseconds()
        guard first.deadlineNanoseconds > now else { return 0 }
        // Round up so we never wake a moment early and spin.
        let milliseconds = (first.deadlineNanoseconds - now + 999_999) / 1_000_000
        return Int32(min(milliseconds, UInt64(Int32.max)))
    }

    private func fireDueTimers() {
        let now = MonotonicClock.nowNanoseconds()
        while let first = timers.first, first.deadlineNanoseconds <= now {
            timers.removeFirst()
            first.action()
        }
    }
}
