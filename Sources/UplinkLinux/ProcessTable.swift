import Glibc

/// Whether a process exists, asked of the kernel without disturbing it (`kill` with
/// signal 0): how readers of the state file tell a running agent from a stale file.
public enum ProcessTable {
    public static func exists(_ pid: Int) -> Bool {
        guard pid > 0, pid <= Int(Int32.max) else { return false }
        // EPERM: it exists but belongs to someone we may not signal.
        return kill(pid_t(pid), 0) == 0 || errno == EPERM
    }
}
