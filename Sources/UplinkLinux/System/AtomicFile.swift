import Glibc

/// A file that readers only ever see whole: replaced by writing a temporary file
/// (`PATH.tmp.PID`) in the same directory, fsync, rename over the file, fsync the
/// directory. The state file and the Prometheus textfile are written this way.
enum AtomicFile {
    /// Makes ready to write `path`: refuses a path that is a directory (the rename
    /// could never replace it), and removes temporary files an earlier agent left
    /// behind when it was killed between creating and renaming one (`PATH.tmp.PID` of a
    /// process that no longer runs; another agent's live one is left alone). `what`
    /// names the file in messages ("state file").
    static func prepare(_ path: String, what: String) throws(SystemError) {
        var status = stat()
        if stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            throw SystemError("\(what) \(path) is a directory", errno: EISDIR)
        }
        let (directory, name) = split(path)
        let prefix = name + ".tmp."
        for entryName in (try? SmallFile.directoryEntries(directory, limit: .max, includingHidden: true)) ?? [] {
            guard entryName.hasPrefix(prefix), let pid = Int32(entryName.dropFirst(prefix.count)), pid > 0,
                  pid != getpid(), kill(pid, 0) != 0 && errno == ESRCH else { continue }
            let stale = directory == "/" ? "/" + entryName : directory + "/" + entryName
            if unlink(stale) == 0 { Log.info("removed \(stale), left behind by an agent that was killed") }
        }
    }

    /// Replaces `path` with `text` (mode 0644), creating its directory with mode 0755
    /// if missing. On failure the file is as it was and no temporary file is left.
    /// `durable: false` skips both fsyncs: readers still never see half a file (the
    /// rename does that), only a crash may lose the last version, which suits a file
    /// rewritten often on flash (the metrics textfile).
    static func replace(_ path: String, with text: String, durable: Bool = true) throws(SystemError) {
        let (directoryPath, _) = split(path)
        try makeDirectory(directoryPath)
        let temporary = "\(path).tmp.\(getpid())"
        do {
            let file = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o644)
            try file.writeAll(Array(text.utf8))
            if durable { try Syscall.call("fsync \(temporary)") { fsync(file.rawValue) } }
            file.close()
            try Syscall.call("renaming \(temporary) to \(path)") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        // The rename itself must reach the disk too (not only the file's data).
        if durable, let directoryFile = try? FileDescriptor.open(directoryPath, O_RDONLY | O_DIRECTORY) {
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
