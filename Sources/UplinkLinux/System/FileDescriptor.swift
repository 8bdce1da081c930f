import CLinuxShim
import Glibc

/// An open file descriptor with exactly one owner: closed once, when the owner says
/// so or when the owner lets go of it. Replaces raw `Int32`s with -1 for "none".
package final class FileDescriptor {
    /// The kernel's number; -1 once closed.
    package private(set) var rawValue: Int32
    /// What it is (a path, "pipe to hook x"), for error messages.
    package let label: String

    /// Takes ownership of an open descriptor.
    package init(owning rawValue: Int32, label: String = "descriptor") {
        self.rawValue = rawValue
        self.label = label
    }

    deinit { close() }

    package var isOpen: Bool { rawValue >= 0 }

    /// Closes now (idempotent). The descriptor must no longer be watched by a loop.
    package func close() {
        guard rawValue >= 0 else { return }
        _ = Glibc.close(rawValue)
        rawValue = -1
    }

    /// `open(2)` with O_CLOEXEC added.
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
        OpenedPaths.note(path)
        let raw = try Syscall.call("open \(path)") { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(owning: raw, label: path)
    }

    /// A pipe: (read end, write end), both close-on-exec.
    package static func pipe(label: String) throws(SystemError) -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [Int32] = [-1, -1]
        try Syscall.call("pipe for \(label)") { uplinkd_pipe2(&ends, O_CLOEXEC) }
        return (FileDescriptor(owning: ends[0], label: label), FileDescriptor(owning: ends[1], label: label))
    }

    /// Adds O_NONBLOCK.
    package func setNonblocking() throws(SystemError) {
        let flags = try Syscall.call("fcntl F_GETFL \(label)") { fcntl(rawValue, F_GETFL) }
        try Syscall.call("fcntl F_SETFL \(label)") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// One read into `buffer`; 0 at end of file, nil when a non-blocking read would block.
    package func read(into buffer: inout [UInt8], offset: Int = 0) throws(SystemError) -> Int? {
        let descriptor = rawValue
        return try Syscall.nonblocking("reading \(label)") {
            buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        }
    }

    /// One write from `bytes`; nil when a non-blocking write would block.
    package func write(_ bytes: ArraySlice<UInt8>) throws(SystemError) -> Int? {
        let descriptor = rawValue
        return try Syscall.nonblocking("writing \(label)") {
            bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    /// Writes every byte (a blocking descriptor).
    package func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            guard let written = try write(bytes[offset...]) else {
                throw SystemError("writing \(label)", errno: EAGAIN)
            }
            offset += written
        }
    }
}
