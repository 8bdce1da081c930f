/// A first-in first-out queue that holds at most `capacity` elements: appending to a
/// full queue drops the oldest, and `dropped` counts every element lost that way.
/// Events wait here while the broker cannot be reached; the newest tell the most.
public struct BoundedQueue<Element>: Sendable where Element: Sendable {
    public let capacity: Int
    private var storage: [Element] = []
    /// Index of the oldest element in `storage` (a ring once full).
    private var head = 0
    public private(set) var dropped = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a bounded queue needs room for one element")
        self.capacity = capacity
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// Adds `element` as the newest; returns true when the oldest was dropped for it.
    @discardableResult
    public mutating func append(_ element: Element) -> Bool {
        if storage.count < capacity {
            storage.append(element)
            return false
        }
        storage[head] = element
        head = (head + 1) % capacity
        dropped += 1
        return true
    }

    /// Every element, oldest first, leaving the queue empty (`dropped` stays).
    public mutating func removeAll() -> [Element] {
        let ordered = Array(storage[head...] + storage[..<head])
        storage.removeAll(keepingCapacity: true)
        head = 0
        return ordered
    }
}

/// A source of uniform random integers: `random(n)` is in `0..<n`. The adapter
/// passes the system generator; tests pass fixed sequences.
public typealias RandomSource = (Int) -> Int

/// When to try the broker again: 1 s after the first failure, doubling to at most
/// 10 minutes, each delay drawn from its upper half ("equal jitter"), so a fleet that
/// lost its broker at the same moment does not come back at the same moment.
public struct ReconnectBackoff: Sendable, Equatable {
    public var initialMilliseconds: Int
    public var maximumMilliseconds: Int
    /// Failed attempts since the last successful connection.
    public private(set) var failures = 0

    public init(initialMilliseconds: Int = 1_000, maximumMilliseconds: Int = 600_000) {
        self.initialMilliseconds = initialMilliseconds
        self.maximumMilliseconds = maximumMilliseconds
    }

    /// The ceiling of the next delay, before jitter.
    public var ceilingMilliseconds: Int {
        var ceiling = initialMilliseconds
        for _ in 0..<min(failures, 40) where ceiling < maximumMilliseconds { ceiling *= 2 }
        return min(ceiling, maximumMilliseconds)
    }

    /// The delay before the next attempt; counts a failure.
    public mutating func nextDelayMilliseconds(random: RandomSource) -> Int {
        let ceiling = ceilingMilliseconds
        failures += 1
        let half = ceiling / 2
        return ceiling - half + random(half + 1)
    }

    /// A connection was made: the next failure starts from the initial delay.
    public mutating func reset() { failures = 0 }
}
