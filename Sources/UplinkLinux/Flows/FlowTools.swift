import Glibc

/// The programs the flow driver runs, found once in the system's directories (the
/// agent passes children no PATH of its own choosing), and a synchronous run for the
/// stop, when the loop no longer turns.
enum FlowTools {
    static let nft = find("nft")
    static let ip = find("ip")
    static let conntrack = find("conntrack")

    private static func find(_ name: String) -> String {
        for directory in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] where access("\(directory)/\(name)", X_OK) == 0 {
            return "\(directory)/\(name)"
        }
        // Not installed: starting it fails with a message that names it.
        return "/usr/sbin/\(name)"
    }

    /// Runs `arguments` to its end with no input or output; true when it exited 0.
    static func runNow(_ arguments: [String]) -> Bool {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var pid: pid_t = 0
        let spawned = withCStringArray(arguments) { argv in
            withCStringArray([ChildProcess.searchPath]) { envp in posix_spawn(&pid, arguments[0], &actions, nil, argv, envp) }
        }
        guard spawned == 0 else { return false }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        return status & 0x7f == 0 && (status >> 8) & 0xff == 0
    }
}
