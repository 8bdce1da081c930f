import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd availability [--period day|week|month] [--json] [--config FILE] [--journal
/// FILE]`: the site's and each uplink's availability over the last day, week or 30
/// days, from the outage journal, without a running agent. Exit 0; 64 usage; 69 the
/// journal cannot be read; 78 configuration error.
enum AvailabilityCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var source = JournalCommands.Source()
        var periodSeconds = 86_400
        var periodName = "day"
        let early = ArgumentReader.readOptions(arguments, for: "availability") { option, inline, reader throws(UsageError) in
            switch option {
            case "--json": source.json = true
            case "--config": source.configPath = try reader.value(for: option, inline: inline)
            case "--journal": source.journalPath = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--period":
                let value = try reader.value(for: option, inline: inline)
                guard let days = ["day": 1, "week": 7, "month": 30][value] else {
                    throw UsageError("--period: expected day, week or month; got '\(value.printableEscaped)'")
                }
                periodSeconds = days * 86_400
                periodName = value
            default: return false
            }
            return true
        }
        if let early { return early }
        let now = Int(time(nil))
        let history: JournalHistory
        do { history = try source.read(now: now) } catch { return error.value }
        let result = history.availability(fromWallSeconds: now - periodSeconds, toWallSeconds: now)
        if source.json {
            print(JSONValue.object([
                ("period", .string(periodName)), ("from", .int(now - periodSeconds)), ("to", .int(now)),
                ("agent_absent_seconds", .int(Int(result.absentSeconds.rounded()))),
                ("site", .object(result.site.jsonMembers)),
                ("uplinks", .array(result.uplinks.map { .object([("interface", .string($0.0.value))] + $0.1.jsonMembers) })),
            ]).serialized())
            return 0
        }
        print("the last \(periodName), \(JournalCommands.localTime(now - periodSeconds)) to \(JournalCommands.localTime(now)) (local time); "
              + "agent not running \(DurationWords.text(milliseconds: Int(result.absentSeconds * 1000)))")
        print("scope     available  outages  longest     mean to recover  on metered")
        func row(_ name: String, _ figures: JournalHistory.Figures) {
            let percent = figures.availabilityPercent.map { "\(PrometheusText.decimal(Int(($0 * 1000).rounded(.down)), scale: 3)) %" } ?? "-"
            let longest = DurationWords.text(milliseconds: Int(figures.longestSeconds * 1000))
            let mean = figures.meanToRecoverSeconds.map { DurationWords.text(milliseconds: Int($0 * 1000)) } ?? "-"
            let metered = DurationWords.text(milliseconds: Int(figures.meteredSeconds * 1000))
            let columns: [String] = [JournalCommands.padded(name, 10), JournalCommands.padded(percent, 11),
                                     JournalCommands.padded(String(figures.outages), 9), JournalCommands.padded(longest, 12),
                                     JournalCommands.padded(mean, 17), metered]
            print(columns.joined())
        }
        row("site", result.site)
        for (name, figures) in result.uplinks { row(name.value, figures) }
        return 0
    }
}
