import Glibc

/// System calls made one way everywhere (after swift-system's `valueOrErrno`): retried
/// while interrupted (EINTR), and a failure turned into a `SystemError` with errno
/// captured at once, before any cleanup can change it.
package enum Syscall {
    /// Calls `body` until it is not interrupted. A negative result throws.
    @discardableResult
    package static func call<Result: FixedWidthInteger>(
        _ operation: @autoclosure () -> String, _ body: () -> Result
    ) throws(SystemError) -> Result {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code != EINTR { throw SystemError(operation(), errno: code) }
        }
    }

    /// As `call`, for descriptors opened non-blocking: nil when the call would block
    /// (EAGAIN), so callers wait for the loop to say the descriptor is ready.
    package static func nonblocking<Result: FixedWidthInteger>(
        _ operation: @autoclosure () -> String, _ body: () -> Result
    ) throws(SystemError) -> Result? {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            if code != EINTR { throw SystemError(operation(), errno: code) }
        }
    }
}
