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
        try StateWriter.makeDirectory(directory.isEmpty ? "/" : directory)
        let temporary = "\(path).tmp.\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw SystemError("creating \(temporary)") }
        var failure: SystemError?
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = SystemError("writing \(temporary)")
                break
            }
            offset += written
        }
        if failure == nil && fsync(descriptor) != 0 { failure = SystemError("fsync \(temporary)") }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = SystemError("renaming \(temporary) to \(path)") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let directoryDescriptor = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// mkdir -p with mode 0755 for what it creates.
    static func makeDirectory(_ path: String) throws(SystemError) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw SystemError("creating directory \(prefix)") }
        }
    }
}
