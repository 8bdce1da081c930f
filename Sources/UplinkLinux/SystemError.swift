import Glibc

/// A failed system call: the errno it left and what we were doing.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let errno: Int32
    public let operation: String

    public init(_ operation: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// A failure of one of the adapters, with the underlying typed error.
public enum AdapterError: Error, CustomStringConvertible {
    case system(SystemError)
    case curl(CurlError)
    case netlink(NetlinkError)

    public var description: String {
        switch self {
        case .system(let error): return "\(error)"
        case .curl(let error): return "\(error)"
        case .netlink(let error): return "\(error)"
        }
    }
}

/// Monotonic time, for elapsed times and timers (never the wall clock).
public enum MonotonicClock {
    public static func nowNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    public static func nowMilliseconds() -> Int {
        Int(nowNanoseconds() / 1_000_000)
    }
}

/// Small, bounded reads of kernel-provided files (sysfs, procfs).
public enum SmallFile {
    /// Reads at most `limit` bytes; nil when the file cannot be opened.
    public static func read(_ path: String, limit: Int = 4_096) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        var total = 0
        while total < limit {
            let count = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress! + total, limit - total)
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            total += count
        }
        return String(decoding: buffer[0..<total], as: UTF8.self)
    }

    /// The whole file, refusing anything larger than `limit` bytes.
    public static func readAll(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open \(path)") }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError("read \(path)")
            }
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
            if result.count > limit { throw SystemError("read \(path) (larger than \(limit) bytes)", errno: EFBIG) }
        }
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The last path component of a symbolic link's target.
    public static func linkTargetName(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.map(String.init)
    }
}
