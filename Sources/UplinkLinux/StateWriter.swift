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
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let directoryPath = directory.isEmpty ? "/" : directory
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
