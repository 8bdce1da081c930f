/// A first-in first-out queue that holds at most `capacity` elements: appending to a
/// full queue drops the oldest, and `dropped` counts every element lost that way.
/// Events wait here while the broker cannot be reached; the newest tell the most.
package struct BoundedQueue<Element>: Sendable where Element: Sendable {
    package let capacity: Int
    private var storage: [Element] = []
    /// Index of the oldest element in `storage` (a ring once full).
    private var head = 0
    package private(set) var dropped = 0

    package init(capacity: Int) {
        precondition(capacity > 0, "a bounded queue needs room for one element")
        self.capacity = capacity
    }

    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.isEmpty }

    /// Adds `element` as the newest; returns true when the oldest was dropped for it.
    @discardableResult
    package mutating func append(_ element: Element) -> Bool {
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
    package mutating func removeAll() -> [Element] {
        let ordered = Array(storage[head...] + storage[..<head])
        storage.removeAll(keepingCapacity: true)
        head = 0
        return ordered
    }
}
