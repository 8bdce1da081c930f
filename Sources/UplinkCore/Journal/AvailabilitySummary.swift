/// The availability figures as JSON (`uplinkd availability --json`, the MQTT
/// summary): a percentage with three decimals, whole seconds.
extension JournalHistory.Figures {
    package var jsonMembers: [(String, JSONValue)] {
        [("availability_pct", availabilityPercent.map { .fixed(Int(($0 * 1000).rounded(.down)), scale: 3) } ?? .null),
         ("outages", .int(outages)), ("outage_seconds", .int(Int(outageSeconds.rounded()))),
         ("longest_seconds", .int(Int(longestSeconds.rounded()))),
         ("mean_to_recover_seconds", meanToRecoverSeconds.map { .int(Int($0.rounded())) } ?? .null),
         ("metered_seconds", .int(Int(meteredSeconds.rounded())))]
    }
}

/// The retained availability summary of one gateway (`PREFIX/NODE/summary`): the
/// site's and each uplink's figures since local midnight and since the first of the
/// month, from the journal's closed records, for a fleet's dashboard and Home
/// Assistant's two availability sensors.
package enum AvailabilitySummary {
    /// Local midnight of today and of the month's first day, and tomorrow's midnight
    /// (when the summary is due again), in wall seconds, as the billing cycles find
    /// local midnights.
    package static func periodStarts(at now: Int, local: LocalTime) -> (day: Int, month: Int, nextDay: Int) {
        let today = local.day(at: now)
        var first = CivilDate(daysSinceEpoch: today)
        first.day = 1
        return (local.midnight(ofDay: today), local.midnight(ofDay: first.daysSinceEpoch), local.midnight(ofDay: today + 1))
    }

    /// `dayStart` and `monthStart` are the local midnights (wall seconds) the adapter
    /// found for now.
    package static func payload(_ history: JournalHistory, nowWallSeconds now: Int, dayStartWallSeconds dayStart: Int,
                                monthStartWallSeconds monthStart: Int) -> String {
        func period(from start: Int) -> JSONValue {
            let result = history.availability(fromWallSeconds: start, toWallSeconds: now)
            let uplinks = result.uplinks.map { JSONValue.object([("interface", .string($0.0.value))] + $0.1.jsonMembers) }
            return .object([("from", .int(start)), ("agent_absent_seconds", .int(Int(result.absentSeconds.rounded()))),
                            ("site", .object(result.site.jsonMembers)), ("uplinks", .array(uplinks))])
        }
        // No time of its own: a summary that did not change is not sent again (after a
        // reconnect, say); its `from` moves at midnight.
        return JSONValue.object([("today", period(from: dayStart)), ("month", period(from: monthStart))]).serialized()
    }
}
