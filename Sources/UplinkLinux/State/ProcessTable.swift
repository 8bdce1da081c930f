import Glibc

/// Whether a process exists, asked of the kernel without disturbing it (`kill` with
/// signal 0): how readers of the state file tell a running agent from a stale file.
package enum ProcessTable {
    package static func exists(_ pid: Int) -> Bool {
        guard pid > 0, pid <= Int(Int32.max) else { return false }
        // EPERM: it exists but belongs to someone we may not signal.
        return kill(pid_t(pid), 0) == 0 || errno == EPERM
    }

    /// Whether `pid` is an uplinkd process: it exists and its command name (the first
    /// 15 bytes of the executable's name) starts with "uplinkd". Before a signal is sent
    /// to the pid a state file names: after a crash that pid may belong to anything,
    /// and SIGUSR1's default action would end it.
    package static func isUplinkd(_ pid: Int) -> Bool {
        guard exists(pid), let command = SmallFile.read("/proc/\(pid)/comm", limit: 64) else { return false }
        return command.hasPrefix("uplinkd")
    }
}
