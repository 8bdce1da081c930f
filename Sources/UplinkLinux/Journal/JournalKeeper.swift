import CLinuxShim
import Glibc
import UplinkCore

/// The agent's runtime side of the outage journal: it times each observation (wall,
/// monotonic, boot id, clock synchronised), appends the records the core closes to
/// the journal file, keeps the checkpoint beside it (when a period opens or closes,
/// on a heartbeat, and at the stop) and compacts the file past its bound. A journal
/// it cannot write costs a warning, never the agent. Created at the agent's start;
/// runs on its loop.
final class JournalKeeper {
    private unowned let agent: Agent
    private let settings: JournalSettings
    /// Nil: the journal is kept in memory only (`journal-file = none`).
    private let path: String?
    private let checkpointPath: String?
    private let bootID: String
    private var journal = OutageJournal()
    private var heartbeat: EventLoop.TimerID?
    /// Records in the file (counted at the start, then kept), for its bound.
    private var recordsInFile = 0
    /// The number of the last record appended (`seq`), carried on from the file.
    private var lastSequence = 0
    private var clockWasSynced: Bool?
    /// A failing disk: told when it starts, hourly, and once it works again.
    private var unwritable = RecurringCondition()
    /// Told of every record written to the file (closed periods, gaps, clock
    /// records, drop counts), in number order, after its fsync: MQTT delivers them.
    var onRecorded: ([JournalRecord]) -> Void = { _ in }

    /// `journal-file = none` keeps the journal in memory only: its records still
    /// make outage events and metrics, but nothing survives the agent.
    init(agent: Agent) {
        let settings = agent.configuration.agent.journal
        self.agent = agent
        self.settings = settings
        path = settings.path
        checkpointPath = settings.checkpointPath
        bootID = JournalKeeper.readBootID()
    }

    /// At the start: the gap since the agent last ran, the periods open then carried on.
    func start() {
        var checkpoint: JournalCheckpoint?
        if let checkpointPath, let text = SmallFile.read(checkpointPath, limit: 1 << 20) {
            do {
                checkpoint = try JournalCheckpoint(text: text)
            } catch {
                Log.warning("journal: ignoring the checkpoint \(checkpointPath): \(error)")
            }
        }
        let recent = readFile()
        checkpoint = checkpoint?.withoutRecorded(recent)
        let now = time()
        clockWasSynced = now.synced
        append(journal.resume(from: checkpoint, at: now, lostAfterSeconds: settings.heartbeatMilliseconds / 1000))
        saveCheckpoint(stopped: false)
        scheduleHeartbeat()
    }

    /// After every published change of the agent's state; returns the records it
    /// closed, numbered (the metrics count them, outage events and MQTT tell them).
    func observe(_ state: AgentState, events: [HookEvent]) -> [JournalRecord] {
        let now = time()
        noteClock(now)
        let update = journal.observe(state, events: events, at: now)
        let closed = append(update.records)
        if update.openPeriodsChanged { saveCheckpoint(stopped: false) }
        return closed
    }

    /// At the stop, after the final state: the periods still open wait in the
    /// checkpoint, which says the agent stopped cleanly.
    func finish() {
        if let heartbeat { agent.loop.cancel(heartbeat) }
        heartbeat = nil
        saveCheckpoint(stopped: true)
    }

    // MARK: - Time

    private func time() -> JournalTime {
        JournalTime(wallSeconds: agent.loop.time.wallSeconds, monotonicMilliseconds: agent.loop.nowMilliseconds,
                    bootID: bootID, synced: JournalKeeper.clockSynchronised())
    }

    /// The first synchronised moment after unsynchronised ones is recorded: it lets
    /// readers correct the earlier times of this boot.
    private func noteClock(_ now: JournalTime) {
        defer { clockWasSynced = now.synced }
        guard now.synced, clockWasSynced == false else { return }
        Log.notice("journal: the wall clock is synchronised now; earlier times of this boot are corrected when read")
        append([JournalRecord(kind: .clock, start: now, end: now)])
    }

    /// The kernel's word. The shipped unit's ProtectClock= refuses adjtimex even to
    /// read: then systemd-timesyncd's mark (its directory exists, and the file in it
    /// once it synchronised in this boot); without either, the clock is taken as
    /// synchronised: the common case, where a mark that never cleared would put a `?`
    /// on every time.
    static func clockSynchronised() -> Bool {
        let kernel = uplinkd_clock_synchronised()
        if kernel >= 0 { return kernel == 1 }
        guard SmallFile.exists("/run/systemd/timesync") else { return true }
        return SmallFile.exists("/run/systemd/timesync/synchronized")
    }

    /// This boot's id (the kernel's random boot_id); a fixed word where it cannot be
    /// read, which makes every duration fall back to the wall clock.
    static func readBootID() -> String {
        let text = SmallFile.read("/proc/sys/kernel/random/boot_id", limit: 64) ?? ""
        let id = text.filter { $0.isHexDigit || $0 == "-" }
        return id.isEmpty ? "0" : id
    }

    // MARK: - Files

    private func scheduleHeartbeat() {
        heartbeat = agent.loop.schedule(afterMilliseconds: settings.heartbeatMilliseconds) { [weak self] in
            guard let self, agent.isRunning else { return }
            noteClock(time())
            saveCheckpoint(stopped: false)
            scheduleHeartbeat()
        }
    }

    private func saveCheckpoint(stopped: Bool) {
        guard let checkpointPath else { return }
        report("saving the checkpoint \(checkpointPath)") { () throws(SystemError) in
            try AtomicFile.replace(checkpointPath, with: journal.checkpoint(at: time(), stopped: stopped).text)
        }
    }

    /// Numbers the records and appends them as whole lines (O_APPEND, then fsync): a
    /// power cut loses at most the records being written, never earlier ones. A
    /// number belongs to a record only once the file holds it: records that could
    /// not be written give their numbers back (and go nowhere but the log).
    @discardableResult
    private func append(_ fresh: [JournalRecord]) -> [JournalRecord] {
        var records = fresh
        for index in records.indices {
            records[index].sequence = lastSequence + index + 1
            Log.info("journal: \(JournalLine.encode(records[index]))")
        }
        guard !records.isEmpty, let path else {
            for index in records.indices { records[index].sequence = nil }
            return records
        }
        // A line a power cut left without its end is ended first: the next record
        // must not be glued to it.
        let start: String
        if !SmallFile.exists(path) {
            start = JournalLine.header + "\n"
        } else if let last = SmallFile.tail(path, limit: 1), !last.isEmpty, last != "\n" {
            start = "\n"
        } else {
            start = ""
        }
        let text = start + records.map { JournalLine.encode($0) + "\n" }.joined()
        let written = report("appending to the journal \(path)") { () throws(SystemError) in
            try AtomicFile.makeDirectory(AtomicFile.split(path).directory)
            let file = try FileDescriptor.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode: 0o644)
            defer { file.close() }
            try file.writeAll(Array(text.utf8))
            try Syscall.call("fsync \(path)") { fsync(file.rawValue) }
        }
        guard written else {
            for index in records.indices { records[index].sequence = nil }
            return records
        }
        lastSequence += records.count
        onRecorded(records)
        recordsInFile += records.count
        if recordsInFile > settings.maximumRecords { compact(path) }
        return records
    }

    /// Drops the oldest records to a quarter below the bound: one rewrite per
    /// quarter of the bound's worth of records.
    private func compact(_ path: String) {
        guard let bytes = try? SmallFile.readAll(path, limit: 64 << 20) else { return }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard let kept = JournalLine.compacted(lines, maximumRecords: settings.maximumRecords, at: time()) else {
            recordsInFile = lines.filter(JournalLine.isRecord).count
            return
        }
        var numbered = kept
        // The drop count is a record too, numbered after the last (its line is
        // written with the kept ones, in front of them).
        var dropped = try? JournalLine.decode(Substring(kept[1]))
        dropped?.sequence = lastSequence + 1
        if let dropped { numbered[1] = JournalLine.encode(dropped) }
        let done = report("compacting the journal \(path)") { () throws(SystemError) in
            try AtomicFile.replace(path, with: numbered.joined(separator: "\n") + "\n")
        }
        if done, let dropped {
            lastSequence += 1
            onRecorded([dropped])
        }
        if done {
            recordsInFile = kept.count - 2
            Log.notice("journal: over \(settings.maximumRecords) records; the oldest dropped, \(recordsInFile) kept")
        }
    }

    /// The file's records, counted for the bound, and its last number; returns its
    /// last records (those a crash may have left the checkpoint behind).
    private func readFile() -> [JournalRecord] {
        guard let path, let bytes = try? SmallFile.readAll(path, limit: 64 << 20) else { return [] }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        recordsInFile = lines.filter(JournalLine.isRecord).count
        lastSequence = JournalLine.lastSequence(lines)
        return lines.suffix(64).compactMap { try? JournalLine.decode($0) }
    }

    /// Runs `work`; a lasting failure is logged when it starts, hourly, and when the
    /// journal works again (`RecurringCondition`).
    @discardableResult
    private func report(_ what: String, _ work: () throws(SystemError) -> Void) -> Bool {
        do {
            try work()
            Log.cleared(&unwritable, now: agent.loop.nowMilliseconds, "journal: written again (\(path ?? "-"))")
            return true
        } catch {
            Log.occurred(&unwritable, now: agent.loop.nowMilliseconds, "journal: \(what): \(error); the agent goes on without it")
            return false
        }
    }
}
