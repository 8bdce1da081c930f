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
        // O_NONBLOCK: a FIFO planted at a configured path must not stall the loop.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return readText(fd, limit: limit)
    }

    /// Up to `limit` bytes from where `fd` stands, as text.
    private static func readText(_ fd: Int32, limit: Int) -> String {
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

    /// The last `limit` bytes of a file that may be long (a lease file dhclient keeps
    /// appending to); nil when it cannot be opened.
    public static func tail(_ path: String, limit: Int) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        if Int(info.st_size) > limit { _ = lseek(fd, off_t(Int(info.st_size) - limit), SEEK_SET) }
        return readText(fd, limit: limit)
    }

    /// Modification time in seconds, or nil when the file does not exist.
    public static func modificationSeconds(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mtim.tv_sec)
    }

    /// Names in a directory (no "." entries), at most `limit` of them, unsorted; an
    /// empty list when it cannot be read (ENOENT is not worth a word).
    public static func directoryEntries(_ directory: String, limit: Int = 4_096) throws(SystemError) -> [String] {
        guard let stream = opendir(directory) else { throw SystemError("reading directory \(directory)") }
        defer { closedir(stream) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
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
