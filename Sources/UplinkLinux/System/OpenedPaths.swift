import Glibc
import Synchronization

/// The paths a thread opens (through `FileDescriptor.open`, the one way this code
/// opens files) while it records them: the agent's runtime tests run the agent on
/// their thread and prove that, behind its adapters' seams, it reads no file of the
/// host. Costs one atomic load per open when nobody records.
package enum OpenedPaths {
    private static let recorders = Atomic<Int>(0)
    private static let lock = Lock()
    nonisolated(unsafe) private static var recorded: [UInt: [String]] = [:]

    /// Runs `body` and returns, with its result, the paths this thread opened meanwhile.
    package static func recording<T>(_ body: () throws -> T) rethrows -> (result: T, paths: [String]) {
        let thread = UInt(pthread_self())
        lock.withLock { recorded[thread] = [] }
        recorders.add(1, ordering: .sequentiallyConsistent)
        defer {
            recorders.subtract(1, ordering: .sequentiallyConsistent)
            lock.withLock { _ = recorded.removeValue(forKey: thread) }
        }
        let result = try body()
        return (result, lock.withLock { recorded[thread] ?? [] })
    }

    static func note(_ path: String) {
        guard recorders.load(ordering: .relaxed) > 0 else { return }
        let thread = UInt(pthread_self())
        lock.withLock {
            if recorded[thread] != nil { recorded[thread]!.append(path) }
        }
    }
}
