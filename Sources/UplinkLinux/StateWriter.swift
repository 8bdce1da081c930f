import Glibc
import UplinkCore

/// Publishes the agent's state file: replaced atomically (write a temporary file in the
/// same directory, fsync, rename, fsync the directory) and only when its content
/// changed, in a directory created with mode 0755 if missing.
public final class StateWriter {
    public let path: String
    private var lastWritten: AgentState?

    public init(path: String) {
        self.path = path
    }

    /// Makes ready to write: refuses a path that is a directory (the rename could never
    /// replace it), and removes temporary files an earlier agent left behind when it
    /// was killed between creating and renaming one (`PATH.tmp.PID` of a process that
    /// no longer runs; another agent's live one is left alone).
    public func prepare() throws(SystemError) {
        var status = stat()
        if stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            throw SystemError("state file \(path) is a directory", errno: EISDIR)
        }
        let (directory, name) = StateWriter.split(path)
        guard let stream = opendir(directory) else { return }
        defer { closedir(stream) }
        let prefix = name + ".tmp."
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard entryName.hasPrefix(prefix), let pid = Int32(entryName.dropFirst(prefix.count)), pid > 0,
                  pid != getpid(), kill(pid, 0) != 0 && errno == ESRCH else { continue }
            let stale = directory == "/" ? "/" + entryName : directory + "/" + entryName
            if unlink(stale) == 0 { Log.info("removed \(stale), left behind by an agent that was killed") }
        }
    }

    /// Writes `state` unless the file already says the same. Errors are returned, not
    /// fatal: the agent keeps running and tries again on the next change.
    @discardableResult
    public func publish(_ state: AgentState) -> SystemError? {
        if let lastWritten, lastWritten.sameContent(as: state) { return nil }
        do {
            try write(StateFileFormat.encode(state))
            lastWritten = state
            return nil
        } catch {
            Log.warning("writing state file: \(error)")
            return error
        }
    }

    private func write(_ text: String) throws(SystemError) {
        let (directoryPath, _) = StateWriter.split(path)
        try StateWriter.makeDirectory(directoryPath)
        let temporary = "\(path).tmp.\(getpid())"
        do {
            let file = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o644)
            try file.writeAll(Array(text.utf8))
            try Syscall.call("fsync \(temporary)") { fsync(file.rawValue) }
            file.close()
            try Syscall.call("renaming \(temporary) to \(path)") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        // The rename itself must reach the disk too (not only the file's data).
        if let directoryFile = try? FileDescriptor.open(directoryPath, O_RDONLY | O_DIRECTORY) {
            fsync(directoryFile.rawValue)
        }
    }

    /// The directory and the file name of an absolute path.
    static func split(_ path: String) -> (directory: String, name: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let directory = parts.dropLast().joined(separator: "/")
        return (directory.isEmpty ? "/" : directory, String(parts.last ?? ""))
    }

    /// mkdir -p with mode 0755 for what it creates.
    static func makeDirectory(_ path: String) throws(SystemError) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 {
                let code = errno
                if code != EEXIST { throw SystemError("creating directory \(prefix)", errno: code) }
            }
        }
    }
}
