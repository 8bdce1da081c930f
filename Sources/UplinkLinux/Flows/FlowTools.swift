import Glibc
import UplinkCore

/// The programs the flow driver runs, found once in the system's directories (the
/// agent passes children no PATH of its own choosing), and a synchronous run for the
/// stop, when the loop no longer turns.
package enum FlowTools {
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
        capture(arguments, limitBytes: 0) != nil
    }

    /// Runs `arguments` to its end and returns what it wrote to its standard output (at
    /// most `limitBytes`, the rest read and dropped); nil when it did not exit 0. For
    /// the command line and the stop, when no loop turns.
    package static func capture(_ arguments: [String], limitBytes: Int) -> String? {
        guard let (readEnd, writeEnd) = try? FileDescriptor.pipe(label: "output of \(arguments[0])") else { return nil }
        let ends = [readEnd.rawValue, writeEnd.rawValue]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let spawned = withCStringArray(arguments) { argv in
            withCStringArray([ChildProcess.searchPath]) { envp in posix_spawn(&pid, arguments[0], &actions, nil, argv, envp) }
        }
        writeEnd.close()
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output += buffer.prefix(max(0, min(count, limitBytes - output.count)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        guard status & 0x7f == 0 && (status >> 8) & 0xff == 0 else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    /// The connections in conntrack per uplink slot (their mark's bits), from
    /// `conntrack -L`; nil when conntrack could not be read.
    package static func pinnedConnections() -> [Int: Int]? {
        guard let listing = capture([conntrack, "-L"], limitBytes: 64 << 20) else { return nil }
        var counts: [Int: Int] = [:]
        for line in listing.split(separator: "\n") {
            if let slot = slot(ofConntrackLine: line) { counts[slot, default: 0] += 1 }
        }
        return counts
    }

    /// The uplink slot of one `conntrack -L` line's `mark=N`, nil for none.
    static func slot<Line: StringProtocol>(ofConntrackLine line: Line) -> Int? {
        guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("mark=") }),
              let mark = UInt32(field.dropFirst(5)) else { return nil }
        let slot = Int((mark & FlowSettings.markMask) >> FlowSettings.markShift)
        return slot > 0 ? slot : nil
    }

    /// Whether the nftables table of the flows exists.
    package static var tableExists: Bool {
        runNow([nft, "list", "table", "inet", FlowRuleset.tableName])
    }

    /// Deletes the nftables table of the flows; false when it could not (or was gone).
    package static func removeTable() -> Bool {
        runNow([nft, "delete", "table", "inet", FlowRuleset.tableName])
    }
}
