import Glibc

/// Small, bounded reads of files other programs keep: sysfs, procfs, lease files,
/// configuration. Every read has a byte limit; nothing here blocks on a FIFO.
package enum SmallFile {
    /// Reads at most `limit` bytes; nil when the file cannot be opened.
    package static func read(_ path: String, limit: Int = 4_096) -> String? {
        // O_NONBLOCK: a FIFO planted at a configured path must not stall the loop.
        guard let file = try? FileDescriptor.open(path, O_RDONLY | O_NONBLOCK) else { return nil }
        return String(decoding: (try? readBytes(file, limit: limit)) ?? [], as: UTF8.self)
    }

    /// The whole file, refusing anything larger than `limit` bytes.
    package static func readAll(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
        let file = try FileDescriptor.open(path, O_RDONLY)
        let bytes = try readBytes(file, limit: limit + 1)
        if bytes.count > limit { throw SystemError("read \(path) (larger than \(limit) bytes)", errno: EFBIG) }
        return bytes
    }

    /// The last `limit` bytes of a file that may be long (a lease file dhclient keeps
    /// appending to); nil when it cannot be opened or is not a regular file.
    package static func tail(_ path: String, limit: Int) -> String? {
        guard let file = try? FileDescriptor.open(path, O_RDONLY | O_NONBLOCK) else { return nil }
        var info = stat()
        guard fstat(file.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        if Int(info.st_size) > limit { _ = lseek(file.rawValue, off_t(Int(info.st_size) - limit), SEEK_SET) }
        return String(decoding: (try? readBytes(file, limit: limit)) ?? [], as: UTF8.self)
    }

    /// Up to `limit` bytes from where the descriptor stands: the one bounded read loop.
    static func readBytes(_ file: FileDescriptor, limit: Int) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: min(limit, 16_384))
        var result: [UInt8] = []
        while result.count < limit {
            guard let count = try file.read(into: &buffer), count > 0 else { break }
            result.append(contentsOf: buffer[0..<min(count, limit - result.count)])
        }
        return result
    }

    /// Modification time in seconds, or nil when the file does not exist.
    package static func modificationSeconds(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mtim.tv_sec)
    }

    /// Names in a directory, at most `limit` of them, unsorted: no hidden ones unless
    /// `includingHidden` (never "." and "..").
    package static func directoryEntries(_ directory: String, limit: Int = 4_096,
                                        includingHidden: Bool = false) throws(SystemError) -> [String] {
        guard let stream = opendir(directory) else { throw SystemError("reading directory \(directory)") }
        defer { closedir(stream) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if includingHidden ? name != "." && name != ".." : !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The last path component of a symbolic link's target.
    package static func linkTargetName(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.map(String.init)
    }
}
