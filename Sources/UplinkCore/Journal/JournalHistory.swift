/// The journal read back for people and scripts (`uplinkd history`, `availability`):
/// its records with the times taken before a clock sync corrected, filtered, and
/// summed into availability figures.
package struct JournalHistory: Sendable {
    /// Oldest first, as written; times corrected where a later clock record allows.
    package private(set) var records: [JournalRecord]

    /// `records` as the journal holds them, then the periods still open
    /// (`JournalCheckpoint.ongoing`).
    package init(records: [JournalRecord], ongoing: [JournalRecord] = []) {
        self.records = Self.corrected(records + ongoing)
    }

    /// A time taken before the wall clock was synchronised is moved by the offset
    /// between the wall and the monotonic clock that its boot's first clock record
    /// gives: the monotonic clock did not jump, so the moment is the same. Times of a
    /// boot that never synchronised stay as they are, still marked.
    static func corrected(_ records: [JournalRecord]) -> [JournalRecord] {
        var offsetMilliseconds: [String: Int] = [:]
        for record in records where record.kind == .clock && offsetMilliseconds[record.end.bootID] == nil {
            offsetMilliseconds[record.end.bootID] = record.end.wallSeconds * 1000 - record.end.monotonicMilliseconds
        }
        func fix(_ time: inout JournalTime) {
            guard !time.synced, let offset = offsetMilliseconds[time.bootID] else { return }
            time.wallSeconds = Int((Double(time.monotonicMilliseconds + offset) / 1000).rounded(.down))
            time.synced = true
        }
        return records.map { record in
            var record = record
            fix(&record.start)
            fix(&record.end)
            return record
        }
    }

    /// The records about `interface` (nil: all of them) that ended at or after
    /// `sinceWallSeconds`, by start (a record is written when its period ends, so
    /// the file has a long outage after the short ones inside it), without the clock
    /// records (the corrections are applied).
    package func listed(interface: InterfaceName?, sinceWallSeconds: Int?) -> [JournalRecord] {
        let started = records.enumerated().sorted {
            ($0.element.start.wallSeconds, $0.offset) < ($1.element.start.wallSeconds, $1.offset)
        }.map(\.element)
        return started.filter { record in
            guard record.kind != .clock else { return false }
            if let since = sinceWallSeconds, record.end.wallSeconds < since { return false }
            guard let interface else { return true }
            // Another uplink's outage is not about this one, whatever the primary was.
            if record.kind == .uplink || record.kind == .metered { return record.interface == interface }
            return record.primaryBefore == interface || record.primaryAfter == interface
                || record.reasons.contains { $0.interface == interface }
        }
    }

    // MARK: - Availability

    /// One scope's figures over a period: the site, or one uplink.
    package struct Figures: Sendable, Equatable {
        /// Seconds of the period the agent watched (the period less its absences).
        package var observedSeconds: Double
        /// Seconds of those without the scope (the site: no primary; an uplink: not online).
        package var outageSeconds: Double
        package var outages: Int
        package var longestSeconds: Double
        /// Seconds of the watched time the scope ran on a metered primary (the site:
        /// any metered uplink; an uplink: itself as the metered primary).
        package var meteredSeconds: Double = 0
        /// Mean length of the outages that ended within the period (one still going
        /// on counts as an outage, with its length so far, but not here).
        package var meanToRecoverSeconds: Double?

        /// Percent of the watched time the scope was available; nil if none was watched.
        package var availabilityPercent: Double? {
            observedSeconds > 0 ? 100 * max(0, observedSeconds - outageSeconds) / observedSeconds : nil
        }
    }

    /// The availability of the site and of each uplink named in the journal over
    /// [`fromWallSeconds`, `toWallSeconds`), with the agent's absences left out of
    /// the watched time.
    package func availability(fromWallSeconds from: Int, toWallSeconds to: Int) -> (site: Figures, uplinks: [(InterfaceName, Figures)], absentSeconds: Double) {
        func span(_ record: JournalRecord) -> (start: Double, end: Double) {
            let start = Double(record.start.wallSeconds)
            return (start, start + Double(record.durationMilliseconds) / 1000)
        }
        func overlap(_ record: JournalRecord, within bounds: (start: Double, end: Double)) -> Double {
            let (start, end) = span(record)
            return max(0, min(end, bounds.end) - max(start, bounds.start))
        }
        let period = (start: Double(from), end: Double(to))
        let absences = records.filter { $0.kind == .absent }
        let absent = absences.reduce(0) { $0 + overlap($1, within: period) }
        let observed = max(0, Double(to - from) - absent)
        /// The part of an outage inside the period that the agent watched: an outage
        /// carried across a restart does not count the time the agent was away.
        func watched(_ record: JournalRecord) -> Double {
            let (start, end) = span(record)
            let bounds = (start: max(start, period.start), end: min(end, period.end))
            guard bounds.end > bounds.start else { return 0 }
            return max(0, bounds.end - bounds.start - absences.reduce(0) { $0 + overlap($1, within: bounds) })
        }
        func figures(_ outages: [JournalRecord], metered: [JournalRecord]) -> Figures {
            let inside = outages.filter { overlap($0, within: period) > 0 }
            let ended = inside.filter { !$0.ongoing && span($0).end <= Double(to) }
            let lengths = ended.map { Double($0.durationMilliseconds) / 1000 }
            var result = Figures(observedSeconds: observed, outageSeconds: min(observed, inside.reduce(0) { $0 + watched($1) }),
                                 outages: inside.count, longestSeconds: inside.map { Double($0.durationMilliseconds) / 1000 }.max() ?? 0,
                                 meanToRecoverSeconds: lengths.isEmpty ? nil : lengths.reduce(0, +) / Double(lengths.count))
            result.meteredSeconds = min(observed, metered.reduce(0) { $0 + watched($1) })
            return result
        }
        let metered = records.filter { $0.kind == .metered }
        // In typed parts: as one expression, Swift 6.0's type checker may give up on it.
        let periodNames: [InterfaceName] = records.compactMap { $0.kind == .uplink || $0.kind == .metered ? $0.interface : nil }
        let primaryNames: [InterfaceName] = records.flatMap { [$0.primaryBefore, $0.primaryAfter].compactMap { $0 } }
        let reasonNames: [InterfaceName] = records.flatMap { $0.reasons.map(\.interface) }
        let names = Set(periodNames + primaryNames + reasonNames)
        let uplinks = names.sorted().map { name in
            (name, figures(records.filter { $0.kind == .uplink && $0.interface == name },
                           metered: metered.filter { $0.interface == name }))
        }
        return (figures(records.filter { $0.kind == .site }, metered: metered), uplinks, absent)
    }
}
