/// The journal on disk: one record per line, its kind first, then `key=value` fields,
/// so that records are appended (never rewritten) and a shell reads them with one
/// `grep` or `awk`:
///
///     site seq=12 start=1764668000 end=1764668031 duration_ms=30512 boot=5f0c… start_mono=81234 end_mono=111746 reasons=eth0:no-carrier,wlan0:timeout primary_before=eth0 primary_after=eth0
///
/// Times are wall-clock seconds; `start_mono`/`end_mono` the monotonic milliseconds of
/// the boot `boot` (an `absent` record spans two: `start_boot` is the earlier);
/// `start_synced=no`/`end_synced=no` mark a time taken before the wall clock was
/// synchronised; `seq` numbers the records of one journal, for delivery. Lists are
/// `IFACE:VALUE` joined by commas. Unknown keys are skipped, so that an older
/// `uplinkd history` reads a newer journal.
package enum JournalLine {
    package static let header = "# uplinkd outage journal, format 1 (see uplinkd-journal(5))"

    /// Whether a line of the file is one of the records its bound counts: not blank,
    /// not a comment, not a drop count.
    package static func isRecord(_ line: Substring) -> Bool {
        !line.isEmpty && !line.hasPrefix("#") && !line.hasPrefix("dropped ")
    }

    package static func encode(_ record: JournalRecord) -> String {
        var fields = [record.kind.rawValue]
        func add(_ key: String, _ value: String?) {
            if let value, !value.isEmpty { fields.append("\(key)=\(value)") }
        }
        add("seq", record.sequence.map(String.init))
        add("interface", record.interface.map(name))
        add("start", String(record.start.wallSeconds))
        add("end", String(record.end.wallSeconds))
        add("duration_ms", String(record.durationMilliseconds))
        if record.start.bootID != record.end.bootID { add("start_boot", record.start.bootID) }
        add("boot", record.end.bootID)
        add("start_mono", String(record.start.monotonicMilliseconds))
        add("end_mono", String(record.end.monotonicMilliseconds))
        if !record.start.synced { add("start_synced", "no") }
        if !record.end.synced { add("end_synced", "no") }
        add("reasons", record.reasons.map { "\(name($0.interface)):\($0.reason.rawValue)" }.joined(separator: ","))
        add("primary_before", record.primaryBefore.map(name))
        add("primary_after", record.primaryAfter.map(name))
        add("primary_reason", record.primaryReason?.rawValue)
        add("detection_ms", record.detectionMilliseconds.map(String.init))
        add("recoveries", list(record.recoverySteps))
        add("bytes", list(record.bytes))
        add("cause", record.cause?.rawValue)
        add("uncertainty_s", record.uncertaintySeconds.map(String.init))
        add("count", record.droppedCount.map(String.init))
        return fields.joined(separator: " ")
    }

    /// The highest record number among `lines` (0: none numbered).
    package static func lastSequence(_ lines: [Substring]) -> Int {
        var last = 0
        for line in lines where !line.isEmpty && !line.hasPrefix("#") {
            if let sequence = (try? decode(line))?.sequence { last = max(last, sequence) }
        }
        return last
    }

    static func list(_ values: [InterfaceName: Int]) -> String {
        values.keys.sorted().map { "\(name($0)):\(values[$0]!)" }.joined(separator: ",")
    }

    /// An interface name as a field holds it: the kernel allows `,`, `=` and `%` in
    /// names (never `:`, `/` or white space), which would split a list or a field.
    static func name(_ interface: InterfaceName) -> String {
        var text = ""
        for character in interface.value {
            switch character {
            case "%": text += "%25"
            case ",": text += "%2C"
            case "=": text += "%3D"
            default: text.append(character)
            }
        }
        return text
    }

    /// The largest number a field may hold: far past any time or count, and small
    /// enough that milliseconds of it cannot overflow.
    static let largestNumber = 1 << 50

    /// The record on `line`; nil for a blank line or a comment.
    package static func decode(_ line: Substring) throws(JournalLineError) -> JournalRecord? {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = words.first, !first.hasPrefix("#") else { return nil }
        guard let kind = JournalRecord.Kind(rawValue: String(first)) else {
            throw JournalLineError(key: nil, "unknown record kind \(quoted(first))")
        }
        let fields = try Fields(words.dropFirst())
        let (start, end) = try fields.times()
        var record = JournalRecord(kind: kind, start: start, end: end)
        record.sequence = try fields.number("seq")
        record.interface = try fields.interface("interface")
        if (kind == .uplink || kind == .metered) && record.interface == nil {
            throw JournalLineError(key: "interface", "missing")
        }
        record.reasons = try fields.reasons()
        record.primaryBefore = try fields.interface("primary_before")
        record.primaryAfter = try fields.interface("primary_after")
        record.primaryReason = try fields.choice("primary_reason", "a reason", PrimaryChangeReason.init(rawValue:))
        record.detectionMilliseconds = try fields.number("detection_ms")
        record.recoverySteps = try fields.counts("recoveries")
        record.bytes = try fields.counts("bytes")
        record.cause = try fields.choice("cause", "stopped or lost", JournalRecord.AbsenceCause.init(rawValue:))
        record.uncertaintySeconds = try fields.number("uncertainty_s")
        record.droppedCount = try fields.number("count")
        return record
    }

    /// A piece of a damaged line as an error quotes it: at most 32 characters, control
    /// and non-ASCII ones escaped, since the line may hold any bytes and the message
    /// reaches a terminal or a log.
    static func quoted(_ text: Substring) -> String {
        // Scalars, not Characters: one Character can be any number of combining scalars.
        var shown = ""
        shown.unicodeScalars.append(contentsOf: text.unicodeScalars.prefix(32))
        return "'\(shown.printableEscaped)'"
    }

    /// A record line's `key=value` fields, read into typed values; each error names
    /// the key and quotes the value.
    private struct Fields {
        private var values: [Substring: Substring] = [:]

        init(_ words: ArraySlice<Substring>) throws(JournalLineError) {
            for word in words {
                guard let equals = word.firstIndex(of: "=") else {
                    throw JournalLineError(key: nil, "\(quoted(word)) is not key=value")
                }
                values[word[..<equals]] = word[word.index(after: equals)...]
            }
        }

        func text(_ key: Substring) -> Substring? { values[key] }

        func number(_ key: Substring) throws(JournalLineError) -> Int? {
            guard let value = values[key] else { return nil }
            guard let number = Int(value), (0...largestNumber).contains(number) else {
                throw JournalLineError(key: key, "\(quoted(value)) is not a number from 0 to \(largestNumber)")
            }
            return number
        }

        func required(_ key: Substring) throws(JournalLineError) -> Int {
            guard let value = try number(key) else { throw JournalLineError(key: key, "missing") }
            return value
        }

        func interface(_ key: Substring) throws(JournalLineError) -> InterfaceName? {
            guard let value = values[key] else { return nil }
            return try Self.interface(value, key)
        }

        static func interface(_ value: Substring, _ key: Substring) throws(JournalLineError) -> InterfaceName {
            guard let name = InterfaceName(FactValue.percentDecoded(String(value))) else {
                throw JournalLineError(key: key, "\(quoted(value)) is not an interface name")
            }
            return name
        }

        /// One of a closed set of words (`make` nil: not one of them, `what` says
        /// which are).
        func choice<Value>(_ key: Substring, _ what: String,
                           _ make: (String) -> Value?) throws(JournalLineError) -> Value? {
            guard let value = values[key] else { return nil }
            guard let chosen = make(String(value)) else {
                throw JournalLineError(key: key, "\(quoted(value)) is not \(what)")
            }
            return chosen
        }

        func boot(_ key: Substring) throws(JournalLineError) -> String? {
            guard let value = values[key] else { return nil }
            guard !value.isEmpty, value.count <= 64, value.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
                throw JournalLineError(key: key, "\(quoted(value)) is not a boot id")
            }
            return String(value)
        }

        /// The period's two ends; only `start` and `boot` are required (an instant
        /// ends where it starts, an `absent` record alone names its `start_boot`).
        func times() throws(JournalLineError) -> (start: JournalTime, end: JournalTime) {
            guard let endBoot = try boot("boot") else { throw JournalLineError(key: "boot", "missing") }
            let startBoot = try boot("start_boot") ?? endBoot
            let start = JournalTime(wallSeconds: try required("start"), monotonicMilliseconds: try number("start_mono") ?? 0,
                                    bootID: startBoot, synced: text("start_synced") != "no")
            let end = JournalTime(wallSeconds: try number("end") ?? start.wallSeconds,
                                  monotonicMilliseconds: try number("end_mono") ?? start.monotonicMilliseconds,
                                  bootID: endBoot, synced: text("end_synced") != "no")
            return (start, end)
        }

        func reasons() throws(JournalLineError) -> [JournalReason] {
            var result: [JournalReason] = []
            for item in (values["reasons"] ?? "").split(separator: ",") {
                let parts = item.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, let reason = Reason(rawValue: String(parts[1])) else {
                    throw JournalLineError(key: "reasons", "\(quoted(item)) is not IFACE:REASON")
                }
                result.append(JournalReason(try Self.interface(parts[0], "reasons"), reason))
            }
            return result
        }

        func counts(_ key: Substring) throws(JournalLineError) -> [InterfaceName: Int] {
            var result: [InterfaceName: Int] = [:]
            for item in (values[key] ?? "").split(separator: ",") {
                let parts = item.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, let count = Int(parts[1]), (0...largestNumber).contains(count) else {
                    throw JournalLineError(key: key, "\(quoted(item)) is not IFACE:NUMBER")
                }
                result[try Self.interface(parts[0], key)] = count
            }
            return result
        }
    }
}

/// A journal line that cannot be read: which key (nil: the line's shape) and why.
package struct JournalLineError: Error, Equatable, CustomStringConvertible {
    package var key: String?
    package var problem: String

    init(key: Substring?, _ problem: String) {
        self.key = key.map(String.init)
        self.problem = problem
    }

    package var description: String { key.map { "\($0): \(problem)" } ?? problem }
}

extension JournalCheckpoint {
    /// The checkpoint file, replaced whole (write, fsync, rename):
    ///
    ///     alive wall=1764668000 mono=81234 boot=5f0c… synced=yes stopped=no primary=eth0
    ///     open uplink interface=wwan0 start=… at_start_recoveries=wwan0:0 at_start_bytes=wwan0:1200
    package var text: String {
        var lines = ["# uplinkd journal checkpoint: when the agent last ran, and the periods open then"]
        lines.append("alive wall=\(alive.wallSeconds) mono=\(alive.monotonicMilliseconds) boot=\(alive.bootID) "
                     + "synced=\(alive.synced ? "yes" : "no") stopped=\(stopped ? "yes" : "no")"
                     + (primary.map { " primary=\(JournalLine.name($0))" } ?? ""))
        for period in open {
            var line = "open " + JournalLine.encode(period.record)
            if !period.recoveriesAtStart.isEmpty { line += " at_start_recoveries=" + JournalLine.list(period.recoveriesAtStart) }
            if !period.bytesAtStart.isEmpty { line += " at_start_bytes=" + JournalLine.list(period.bytesAtStart) }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a checkpoint file; the error names the line.
    package init(text: String) throws(JournalLineError) {
        var alive: JournalTime?
        var stopped = false
        var primary: InterfaceName?
        var open: [OutageJournal.OpenPeriod] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            func failure(_ error: JournalLineError) -> JournalLineError {
                JournalLineError(key: nil, "line \(index + 1): \(error.description)")
            }
            if line.hasPrefix("alive ") {
                var fields: [Substring: Substring] = [:]
                for word in line.split(separator: " ").dropFirst() {
                    let parts = word.split(separator: "=", maxSplits: 1)
                    if parts.count == 2 { fields[parts[0]] = parts[1] }
                }
                let range = 0...JournalLine.largestNumber
                guard let wall = fields["wall"].flatMap({ Int($0) }), range.contains(wall),
                      let mono = fields["mono"].flatMap({ Int($0) }), range.contains(mono),
                      let boot = fields["boot"], !boot.isEmpty, boot.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
                    throw failure(JournalLineError(key: nil, "alive needs wall=, mono= and boot="))
                }
                alive = JournalTime(wallSeconds: wall, monotonicMilliseconds: mono, bootID: String(boot),
                                    synced: fields["synced"] != "no")
                stopped = fields["stopped"] == "yes"
                if let name = fields["primary"] {
                    guard let interface = InterfaceName(FactValue.percentDecoded(String(name))) else {
                        throw failure(JournalLineError(key: "primary", "\(JournalLine.quoted(name)) is not an interface name"))
                    }
                    primary = interface
                }
            } else if line.hasPrefix("open ") {
                let rest = line.dropFirst(5)
                let record: JournalRecord?
                do { record = try JournalLine.decode(rest) } catch { throw failure(error) }
                guard let record, [.site, .uplink, .metered].contains(record.kind) else {
                    throw failure(JournalLineError(key: nil, "only site, uplink and metered periods are open"))
                }
                var period = OutageJournal.OpenPeriod(record: record)
                for word in rest.split(separator: " ") {
                    let parts = word.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, parts[0] == "at_start_recoveries" || parts[0] == "at_start_bytes" else { continue }
                    var counts: [InterfaceName: Int] = [:]
                    for item in parts[1].split(separator: ",") {
                        let pair = item.split(separator: ":", maxSplits: 1)
                        if pair.count == 2, let name = InterfaceName(FactValue.percentDecoded(String(pair[0]))),
                           let count = Int(pair[1]), (0...JournalLine.largestNumber).contains(count) { counts[name] = count }
                    }
                    if parts[0] == "at_start_bytes" { period.bytesAtStart = counts } else { period.recoveriesAtStart = counts }
                }
                open.append(period)
            } else if !line.isEmpty && !line.hasPrefix("#") {
                throw failure(JournalLineError(key: nil, "expected an alive or open line"))
            }
        }
        guard let alive else { throw JournalLineError(key: nil, "no alive line") }
        self.init(alive: alive, stopped: stopped, primary: primary, open: open)
    }
}

extension JournalLine {
    /// The journal's lines after dropping the oldest records to a quarter below
    /// `maximumRecords`, so that compaction (a rewrite) is rare: the kept records
    /// follow the header and one `dropped` record that counts every record dropped so
    /// far (earlier drop counts are added in). `lines` are the file's lines; nil: the
    /// journal is within its bound, nothing to rewrite.
    package static func compacted(_ lines: [Substring], maximumRecords: Int, at now: JournalTime) -> [String]? {
        var records: [Substring] = []
        var droppedBefore = 0
        for line in lines where !line.isEmpty && !line.hasPrefix("#") {
            if isRecord(line) {
                records.append(line)
            } else if let count = (try? decode(line))?.droppedCount {
                droppedBefore += count
            }
        }
        guard records.count > maximumRecords else { return nil }
        let keep = max(1, maximumRecords * 3 / 4)
        var dropped = JournalRecord(kind: .dropped, start: now, end: now)
        dropped.droppedCount = droppedBefore + records.count - keep
        return [header, encode(dropped)] + records.suffix(keep).map(String.init)
    }
}
