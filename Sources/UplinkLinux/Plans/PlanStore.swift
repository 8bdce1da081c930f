import Glibc
import UplinkCore

/// The data plans' file (`[agent] plan-file`, `/var/lib/uplinkd/plans`): read at start,
/// replaced atomically (`AtomicFile`, with fsync: it must survive a power cut) at most
/// every `plan-save-interval`, at a stop, and at once when a cycle begins, a mark is
/// crossed or a plan is reset. On a gateway's flash that is a few hundred bytes every
/// five minutes.
///
/// Resets by hand (`uplinkd plan IFACE --reset`) reach the running agent through a
/// request file beside it (`PATH.reset`, one `reset IFACE` line each) and SIGUSR1; the
/// agent takes the file by renaming it, so a request written meanwhile waits for the
/// next signal instead of being lost.
package final class PlanStore {
    package let path: String
    /// Something was read or written: an empty set of plans must be written too.
    private var inUse = false
    /// Writing the file fails (told once, then hourly, then when it works again).
    private var unwritable = RecurringCondition()
    /// A file that could not be read nor set aside: never replaced.
    private var readOnly = false

    package init(path: String) {
        self.path = path
    }

    package var requestPath: String { path + ".reset" }

    /// Removes temporary files of agents killed mid-write, then reads the plans. A file
    /// that cannot be read as plans (malformed, too large, unreadable) is set aside
    /// (`PATH.bad`, or `PATH.bad.N` when that is taken) with a warning, and counting
    /// starts afresh: never a reason not to run. When it cannot even be set aside, the
    /// store writes nothing, so what it held is never overwritten.
    package func load() -> [InterfaceName: PlanLedger] {
        try? AtomicFile.prepare(path, what: "plan file")
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.readAll(path, limit: 1 << 20)
        } catch {
            if error.errno != ENOENT { setAside(because: "cannot read it (\(error))") }
            return [:]
        }
        do {
            let ledgers = try PlanFileFormat.decode(String(decoding: bytes, as: UTF8.self))
            inUse = true
            Log.info("data plans read from \(path): \(ledgers.keys.sorted().map(\.value).joined(separator: " "))")
            return ledgers
        } catch {
            setAside(because: "\(error)")
            return [:]
        }
    }

    private func setAside(because reason: String) {
        let names = [path + ".bad"] + (1...9).map { "\(path).bad.\($0)" }
        let aside = names.first { !SmallFile.exists($0) } ?? names[names.count - 1]
        if rename(path, aside) == 0 {
            Log.warning("plan file \(path): \(reason); kept as \(aside), data plans start from zero")
        } else {
            readOnly = true
            Log.warning("plan file \(path): \(reason), and it cannot be set aside (\(SystemError("rename"))): "
                        + "data plans start from zero and are not saved until it is removed")
        }
    }

    /// Writes the plans (nothing when there never were any). A failure is logged when
    /// it starts, hourly while it lasts and when it ends (`RecurringCondition`); the
    /// agent runs on.
    package func save(_ ledgers: [InterfaceName: PlanLedger], wallSeconds: Int) {
        guard inUse || !ledgers.isEmpty else { return }
        do {
            try write(ledgers, wallSeconds: wallSeconds)
            Log.cleared(&unwritable, now: wallSeconds * 1_000, "plan file \(path) written again")
        } catch {
            Log.occurred(&unwritable, now: wallSeconds * 1_000, "writing the plan file: \(error)")
        }
    }

    /// Replaces the file with these plans.
    package func write(_ ledgers: [InterfaceName: PlanLedger], wallSeconds: Int) throws(SystemError) {
        // The file there could not be read nor set aside: what it holds is kept.
        if readOnly { throw SystemError("not replacing \(path), which could not be read", errno: EPERM) }
        try AtomicFile.replace(path, with: PlanFileFormat.encode(ledgers, writtenWallSeconds: wallSeconds))
        inUse = true
    }

    /// The resets asked for since the last call (their interfaces, in order).
    package func takeRequests() -> [InterfaceName] {
        let taken = "\(requestPath).taking.\(getpid())"
        guard rename(requestPath, taken) == 0 else { return [] }
        defer { unlink(taken) }
        guard let text = SmallFile.read(taken, limit: 65_536) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 2, words[0] == "reset" else { return nil }
            return InterfaceName(String(words[1]))
        }
    }

    /// Appends a reset request for `name` (the command line's side).
    package static func request(reset name: InterfaceName, at requestPath: String) throws(SystemError) {
        let (directory, _) = AtomicFile.split(requestPath)
        try AtomicFile.makeDirectory(directory)
        let file = try FileDescriptor.open(requestPath, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, mode: 0o600)
        try file.writeAll(Array("reset \(name.value)\n".utf8))
        file.close()
    }
}

extension LocalTime {
    /// The system's local time (TZ, else /etc/localtime), as the C library knows it.
    package static var system: LocalTime {
        tzset()
        return LocalTime { epochSeconds in
            var time = time_t(epochSeconds)
            var parts = tm()
            guard localtime_r(&time, &parts) != nil else { return 0 }
            return Int(parts.tm_gmtoff)
        }
    }
}
