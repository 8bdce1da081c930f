/// Where the outage journal is kept and how much of it (`[agent] journal-file`,
/// `journal-records`, `journal-heartbeat`).
package struct JournalSettings: Sendable, Equatable {
    /// On persistent storage (systemd's StateDirectory), beside the data plans; nil:
    /// no journal (`journal-file = none`).
    package var path: String? = "/var/lib/uplinkd/journal"
    /// The journal keeps at most this many records: past it, the oldest are dropped
    /// (and counted in a `dropped` record) when the file is next compacted.
    package var maximumRecords = 5_000
    /// How often the checkpoint is saved while nothing happens: the flash writes of an
    /// idle hour, and how much earlier than its last sign of life a crash or power cut
    /// may have stopped the agent.
    package var heartbeatMilliseconds = 600_000

    package init() {}

    /// The checkpoint beside the journal (`journal-file` + `.checkpoint`).
    package var checkpointPath: String? { path.map(Self.checkpointPath(ofJournal:)) }

    /// How far MQTT delivered the journal (`journal-file` + `.delivered`).
    package var deliveredPath: String? { path.map { $0 + ".delivered" } }

    /// The checkpoint of the journal at `path` (a reader given `--journal FILE`).
    package static func checkpointPath(ofJournal path: String) -> String { path + ".checkpoint" }
}

extension ConfigurationKeys {
    /// `[agent]` keys of the outage journal.
    static let agentJournal = KeyTable<Configuration>(section: "agent", [
        ("journal-file", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.journal.path = value == "none" ? nil : try ValueParser.absoluteFilePath(value) }),
        ("journal-records", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.journal.maximumRecords = try ValueParser.count(value, range: 100...200_000) }),
        ("journal-heartbeat", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.journal.heartbeatMilliseconds = try ValueParser.duration(value, range: 60_000...3_600_000) }),
    ])
}
