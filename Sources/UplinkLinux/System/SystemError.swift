import Glibc

/// A failed system call: the errno it left and what we were doing.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let errno: Int32
    public let operation: String

    /// `errno` must be read right after the failing call, before anything else
    /// (a `close`, a log line) can overwrite it; `Syscall` does that.
    public init(_ operation: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
