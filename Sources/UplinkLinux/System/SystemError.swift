import Glibc

/// A failed system call: the errno it left and what we were doing.
package struct SystemError: Error, Sendable, CustomStringConvertible {
    package let errno: Int32
    package let operation: String

    /// `errno` must be read right after the failing call, before anything else
    /// (a `close`, a log line) can overwrite it; `Syscall` does that.
    package init(_ operation: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.errno = errno
    }

    package var description: String {
        "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
