import Testing
import UplinkCore
import UplinkLinux
import UplinkTestSupport

/// uplinkd-journal(5) is held to the journal's encoder: RECORDS has one entry per
/// record kind (`JournalRecord.Kind.allCases`), FIELDS one per key the line encoder
/// can write (read from its source, and checked against what it writes), and none
/// other; the JSON and CHECKPOINT sections name every member and key the code writes.
@Suite("Journal manual page")
struct JournalManPageTests {
    private static let page = "packaging/debian/uplinkd-journal.5"

    /// Every key `JournalLine.encode` can write: its `add("KEY", ...)` calls. Some are
    /// written only in some cases (another boot, an unsynchronised clock), so the
    /// source says more than any one record.
    static func lineKeys() throws -> [String] {
        let source = try ManPageOutline.read("Sources/UplinkCore/Journal/JournalLine.swift")
        guard let start = source.firstRange(of: "static func encode("),
              let stop = source[start.upperBound...].firstRange(of: "return fields.joined") else { return [] }
        return source[start.upperBound..<stop.lowerBound].split(separator: "add(\"").dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
    }

    /// A record with every optional part set, across two boots, its times taken
    /// before the clock was synchronised.
    static var fullRecord: JournalRecord {
        let start = JournalTime(wallSeconds: 1_764_668_000, monotonicMilliseconds: 81_234, bootID: "5f0c", synced: false)
        let end = JournalTime(wallSeconds: 1_764_668_031, monotonicMilliseconds: 1_000, bootID: "6a1d", synced: false)
        let eth0: InterfaceName = "eth0"
        var record = JournalRecord(kind: .uplink, interface: eth0, start: start, end: end)
        record.sequence = 12
        record.reasons = [JournalReason(eth0, .noCarrier)]
        record.primaryBefore = eth0
        record.primaryAfter = "wwan0"
        record.primaryReason = .lost
        record.detectionMilliseconds = 900
        record.recoverySteps = [eth0: 1]
        record.bytes = [eth0: 4_096]
        record.cause = .lost
        record.uncertaintySeconds = 600
        record.droppedCount = 3
        record.ongoing = true
        return record
    }

    /// The keys of a line's `KEY=VALUE` words.
    static func keys(ofLine line: Substring) -> [String] {
        line.split(separator: " ").filter { $0.contains("=") }.map { String($0.prefix { $0 != "=" }) }
    }

    /// The member names of a JSON object, and of the objects in its arrays. Objects
    /// keyed by interface (`recovery_steps`, `bytes`) have no names of their own.
    static func memberNames(_ value: JSONValue) -> [String] {
        guard case .object(let members) = value else { return [] }
        return members.flatMap { member -> [String] in
            guard case .array(let elements) = member.1 else { return [member.0] }
            return [member.0] + elements.flatMap(memberNames)
        }
    }

    @Test func theSourceIsReadAsTheEncoderWrites() throws {
        let keys = try Self.lineKeys()
        let written = Self.keys(ofLine: Substring(JournalLine.encode(Self.fullRecord)))
        #expect(keys.count >= 20 && written == keys, "JournalLine.swift read wrong: \(keys); a full record has \(written)")
        #expect(try JournalLine.decode(Substring(JournalLine.encode(Self.fullRecord)))?.interface == "eth0")
    }

    @Test func thePageHasEveryRecordKindAndFieldAndNoOther() throws {
        let check = JournalPageCheck(page: try ManPageOutline.read(Self.page))
        let records = check.entries("RECORDS", match: JournalRecord.Kind.allCases.map(\.rawValue))
        #expect(records == [])
        let fields = check.entries("FIELDS", match: try Self.lineKeys())
        #expect(fields == [])
    }

    /// `uplinkd history --json` (and MQTT's journal topic) writes `JournalRecord.json`;
    /// `availability --json` the figures of each scope.
    @Test func thePageNamesEveryJSONMember() throws {
        let check = JournalPageCheck(page: try ManPageOutline.read(Self.page))
        var site = Self.fullRecord
        site.kind = .site
        site.ongoing = false
        let figures = JournalHistory(records: [site]).availability(fromWallSeconds: 0, toWallSeconds: 1_764_700_000).site
        let names = Self.memberNames(Self.fullRecord.json) + figures.jsonMembers.map(\.0)
        #expect(names.contains("ongoing") && names.contains("recovery_steps") && names.contains("mean_to_recover_seconds"))
        #expect(check.missing(names, from: "JSON") == [])
    }

    /// The checkpoint as the code writes it (read back from a checkpoint with an open
    /// period and its counts at the start, and written again).
    @Test func thePageNamesEveryCheckpointKey() throws {
        let open = "open " + JournalLine.encode(JournalRecord(kind: .site, start: Self.fullRecord.start, end: Self.fullRecord.start))
        let text = try JournalCheckpoint(text: """
            alive wall=1764668000 mono=81234 boot=5f0c synced=no stopped=no primary=eth0
            \(open) at_start_recoveries=wwan0:1 at_start_bytes=wwan0:1200
            """).text
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let names = lines.flatMap { [String($0.prefix { $0 != " " })] + Self.keys(ofLine: $0) }
        #expect(names.contains("at_start_bytes") && names.contains("synced"), "checkpoint written as \(text)")
        // An open period's own fields are the journal's, in FIELDS.
        let recordKeys = try Self.lineKeys()
        let check = JournalPageCheck(page: try ManPageOutline.read(Self.page))
        #expect(check.missing(names.filter { !recordKeys.contains($0) }, from: "CHECKPOINT") == [])
    }

    @Test func eachKindOfDriftIsNamed() {
        let check = JournalPageCheck(page: """
            .SH RECORDS
            .TP
            .B site
            .TP
            .B site
            .TP
            .B reboot
            .SH JSON
            Members \\fBkind\\fR and \\fBduration_ms\\fR.
            """)
        #expect(check.entries("RECORDS", match: ["site", "uplink"]) == [
            "RECORDS has no entry for 'uplink'",
            "RECORDS has 2 entries for 'site'",
            "RECORDS has an entry for 'reboot', which the code does not write",
        ])
        #expect(check.entries("FIELDS", match: ["seq"]) == ["FIELDS has no entry for 'seq'"])
        #expect(check.missing(["kind", "duration_ms", "clock_synced"], from: "JSON") == ["JSON does not name 'clock_synced'"])
    }
}

/// What uplinkd-journal(5) must say, section by section.
struct JournalPageCheck {
    let outline: ManPageOutline

    init(page: String) {
        outline = ManPageOutline(page: page)
    }

    /// The section's entries are `names`, each once, and nothing else.
    func entries(_ section: String, match names: [String]) -> [String] {
        let tags = outline.tags[section] ?? []
        var problems = names.filter { !tags.contains($0) }.map { "\(section) has no entry for '\($0)'" }
        var seen: Set<String> = []
        for tag in tags where seen.insert(tag).inserted {
            let count = tags.filter { $0 == tag }.count
            if count > 1 { problems.append("\(section) has \(count) entries for '\(tag)'") }
            if !names.contains(tag) { problems.append("\(section) has an entry for '\(tag)', which the code does not write") }
        }
        return problems
    }

    /// The names the section's text does not mention.
    func missing(_ names: [String], from section: String) -> [String] {
        let words = Set(outline.words[section] ?? [])
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted && !words.contains($0) }.map { "\(section) does not name '\($0)'" }
    }
}
