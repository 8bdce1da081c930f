import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd history [IFACE] [--since WHEN] [--json] [--config FILE] [--journal FILE]`:
/// the outage journal's records, oldest first (uplinkd-journal(5)), read
/// without a running agent. Exit 0; 64 usage; 69 the journal cannot be read; 78
/// configuration error.
enum HistoryCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var source = JournalCommands.Source()
        var interface: InterfaceName?
        var since: Int?
        let now = Int(time(nil))
        let early = ArgumentReader.readOptions(arguments, for: "history") { option, inline, reader throws(UsageError) in
            switch option {
            case "--json": source.json = true
            case "--config": source.configPath = try reader.value(for: option, inline: inline)
            case "--journal": source.journalPath = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--since": since = try sinceValue(try reader.value(for: option, inline: inline), now: now)
            default:
                guard let name = try interfaceOperand(option, given: interface) else { return false }
                interface = name
            }
            return true
        }
        if let early { return early }
        let history: JournalHistory
        do { history = try source.read(now: now) } catch { return error.value }
        let records = history.listed(interface: interface, sinceWallSeconds: since)
        if source.json {
            for record in records { print(record.json.serialized()) }
        } else if records.isEmpty {
            print("no records" + (interface.map { " about \($0)" } ?? "") + (since == nil ? "" : " in that time"))
        } else {
            for record in records { print(line(record)) }
        }
        return 0
    }

    /// `--since`: a duration back from now (`30m`, `12h`, `7d`), a local date
    /// (`2026-12-01`, its midnight) or epoch seconds (`@1764547200`).
    static func sinceValue(_ text: String, now: Int) throws(UsageError) -> Int {
        if text.hasPrefix("@"), let seconds = Int(text.dropFirst()) { return seconds }
        if let milliseconds = try? ValueParser.duration(text, range: 0...(100 * 365 * 86_400_000)) {
            return now - milliseconds / 1000
        }
        let parts = text.split(separator: "-")
        if parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
           (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) {
            var fields = tm()
            fields.tm_year = Int32(year - 1900)
            fields.tm_mon = Int32(month - 1)
            fields.tm_mday = Int32(day)
            fields.tm_isdst = -1
            let seconds = mktime(&fields)
            if seconds != -1 { return Int(seconds) }
        }
        throw UsageError("--since: expected a duration (30m, 12h, 7d), a date (2026-12-01) or @EPOCH-SECONDS; "
                         + "got '\(text.printableEscaped)'")
    }

    /// One record for people: when (local time), what, how long, and what was seen.
    static func line(_ record: JournalRecord) -> String {
        var text = "\(JournalCommands.localTime(record.start.wallSeconds))\(record.start.synced ? "" : "?")  "
        let what = record.kind == .uplink || record.kind == .metered ? "\(record.interface?.value ?? "?")" : record.kind.rawValue
        text += JournalCommands.padded(what, 9) + " "
        let reasons = record.reasons.map { "\($0.interface) \($0.reason.rawValue)" }.joined(separator: ", ")
        let soFar = record.ongoing ? " so far (ongoing)" : ""
        func primaries() -> String { "primary \(record.primaryBefore?.value ?? "none") -> \(record.primaryAfter?.value ?? "none")" }
        switch record.kind {
        case .site:
            text += "offline \(DurationWords.text(milliseconds: record.durationMilliseconds))\(soFar); \(primaries()); \(reasons)"
        case .uplink:
            text += "not online \(DurationWords.text(milliseconds: record.durationMilliseconds))\(soFar): \(reasons)"
        case .failover:
            text += "\(primaries()) (\(record.primaryReason?.rawValue ?? "?"))" + (reasons.isEmpty ? "" : "; \(reasons)")
            if let detection = record.detectionMilliseconds, record.primaryReason == .lost {
                text += "; last proven \(DurationWords.text(milliseconds: detection)) before"
            }
        case .absent:
            text += "agent not running \(DurationWords.text(milliseconds: record.durationMilliseconds))"
            switch record.cause {
            case .stopped?: text += " (stopped)"
            default: text += " (crash, kill or power cut: from its last sign of life; it may have run up to \(record.uncertaintySeconds ?? 0) s of it)"
            }
        case .metered:
            text += "carried the site \(DurationWords.text(milliseconds: record.durationMilliseconds))\(soFar) (metered)"
        case .dropped:
            text += "\(record.droppedCount ?? 0) older records dropped (journal-records)"
        case .clock:
            text += "wall clock synchronised"
        }
        let steps = record.recoverySteps.keys.sorted().map { "\($0) \(record.recoverySteps[$0]!)" }
        if !steps.isEmpty { text += "; modem recovery steps: " + steps.joined(separator: ", ") }
        let bytes = record.bytes.keys.sorted().map { "\($0) \(PlanCommand.size(record.bytes[$0]!))" }
        if !bytes.isEmpty { text += "; carried: " + bytes.joined(separator: ", ") }
        return text
    }
}
