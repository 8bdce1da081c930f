import Testing
import UplinkCore

/// The journal's way out: record numbers in the line, delivery over MQTT until the
/// broker acknowledged each record (in order, across restarts through the mark), the
/// `outage` hook event's environment and the availability summary with its Home
/// Assistant sensors.
@Suite("Journal delivery")
struct JournalDeliveryTests {
    private func record(_ sequence: Int?, _ kind: JournalRecord.Kind = .site, start: Int = 1_764_600_000,
                        seconds: Int = 30) -> JournalRecord {
        let begin = JournalTime(wallSeconds: start, monotonicMilliseconds: 5_000, bootID: "0f1e", synced: true)
        let end = JournalTime(wallSeconds: start + seconds, monotonicMilliseconds: 5_000 + seconds * 1000,
                              bootID: "0f1e", synced: true)
        var record = JournalRecord(kind: kind, start: begin, end: end)
        record.sequence = sequence
        record.reasons = [JournalReason("eth0", .noCarrier), JournalReason("wlan0", .timeout)]
        record.primaryBefore = "eth0"
        record.primaryAfter = "eth0"
        return record
    }

    private let topics = MQTTTopics(prefix: "uplinkd", node: "gw1", discoveryPrefix: "homeassistant")

    @Test func theNumberRoundTripsThroughTheLineAndTheLastIsFound() throws {
        let line = JournalLine.encode(record(12))
        #expect(line.hasPrefix("site seq=12 start="))
        #expect(try JournalLine.decode(Substring(line))?.sequence == 12)
        #expect(try JournalLine.decode(Substring(JournalLine.encode(record(nil))))?.sequence == nil)
        let lines = [JournalLine.header, JournalLine.encode(record(3)), "dropped seq=9 start=1 boot=0f1e count=4",
                     JournalLine.encode(record(nil))].map { Substring($0) }
        #expect(JournalLine.lastSequence(lines) == 9)
        #expect(JournalLine.lastSequence([]) == 0)
        #expect(throws: JournalLineError.self) { try JournalLine.decode("site seq=-1 start=1 boot=0f1e") }
    }

    @Test func recordsGoOutOldestFirstAndTheMarkMovesOnlyOverAnUnbrokenRun() {
        var delivery = JournalDelivery(journal: [record(1), record(2), record(nil)], deliveredThrough: 1)
        #expect(delivery.waitingCount == 1)
        delivery.add([record(4), record(3)])
        let first = delivery.take()
        #expect(first.map(\.sequence) == [2, 3, 4])
        // Handed once: a reconnect does not hand them again (the client resends).
        let again = delivery.take()
        #expect(again.isEmpty)
        // 3 acknowledged before 2: the mark waits for 2.
        let three = delivery.acknowledged(3)
        #expect(!three)
        #expect(delivery.deliveredThrough == 1)
        let two = delivery.acknowledged(2)
        #expect(two)
        #expect(delivery.deliveredThrough == 3)
        // An acknowledgement of nothing handed changes nothing.
        let seven = delivery.acknowledged(7)
        let four = delivery.acknowledged(4)
        #expect(!seven && four)
        #expect(delivery.deliveredThrough == 4 && delivery.waitingCount == 0)
    }

    @Test func aRefusedRecordIsHandedAgainAndARepeatIsNotAdded() {
        var delivery = JournalDelivery(journal: [], deliveredThrough: 0)
        delivery.add([record(1), record(2)])
        let handed = delivery.take()
        #expect(handed.count == 2)
        delivery.release(1)
        // Held back until the next connect, not handed with every new record.
        delivery.add([record(3)])
        let before = delivery.take()
        #expect(before.map(\.sequence) == [3])
        delivery.connected()
        let again = delivery.take()
        #expect(again.map(\.sequence) == [1])
        let three = delivery.acknowledged(3)
        #expect(!three)
        delivery.add([record(1)])
        #expect(delivery.waitingCount == 3)
        let one = delivery.acknowledged(1)
        let two = delivery.acknowledged(2)
        #expect(one && two && delivery.deliveredThrough == 3)
        // Acknowledged records are not taken back.
        delivery.add([record(2)])
        #expect(delivery.waitingCount == 0)
    }

    @Test func pastItsBoundTheOldestAreGivenUpAsTheJournalGivesThemUp() {
        var delivery = JournalDelivery(journal: [], deliveredThrough: 0, limit: 3)
        delivery.add((1...5).map { record($0) })
        #expect(delivery.waitingCount == 3 && delivery.deliveredThrough == 2)
        let handed = delivery.take()
        #expect(handed.map(\.sequence) == [3, 4, 5])
        // 4 acknowledged, then 3 given up by newer records: the mark passes both.
        let four = delivery.acknowledged(4)
        #expect(!four)
        delivery.add([record(6)])
        #expect(delivery.deliveredThrough == 4 && delivery.waitingCount == 2)
    }

    @Test func aMarkPastTheJournalMeansANewJournal() {
        let delivery = JournalDelivery(journal: [record(1), record(2)], deliveredThrough: 40)
        #expect(delivery.deliveredThrough == 0 && delivery.waitingCount == 2)
        #expect(JournalDelivery(journal: [], deliveredThrough: 40).deliveredThrough == 0)
    }

    @Test func theMarkFile() {
        #expect(JournalDelivery.markText(17) == "delivered 17\n")
        #expect(JournalDelivery.mark(fromText: "delivered 17\n") == 17)
        for bad in ["", "delivered", "delivered -1", "delivered x", "sent 3", "delivered 3 4"] {
            #expect(JournalDelivery.mark(fromText: bad) == nil, "\(bad)")
        }
    }

    @Test func theMessageIsHistorysObjectWithItsNumber() throws {
        let message = JournalDelivery.message(record(5), topics: topics)
        #expect(message.topic == "uplinkd/gw1/journal" && message.qos == 1 && !message.retain)
        #expect(message.payload.hasPrefix(#"{"kind":"site","seq":5,"start":1764600000,"end":1764600030,"duration_ms":30000"#))
        #expect(message.payload.contains(#"{"interface":"eth0","reason":"no-carrier"}"#))
    }

    @Test func anOutageEventCarriesItsRecordAndOtherEventsEmptyFields() {
        var event = HookEvent(kind: .outage, interface: "eth0", interfaceKind: .ethernet, verdict: .online,
                              previousVerdict: .online, reason: .validated, portalURL: nil, primary: "eth0",
                              previousPrimary: "eth0", wallSeconds: 1_764_600_031)
        event.outage = record(5)
        let environment = event.environment
        for expected in ["UPLINK_EVENT=outage", "UPLINK_OUTAGE_START=1764600000", "UPLINK_OUTAGE_END=1764600030",
                         "UPLINK_OUTAGE_DURATION_MS=30000", "UPLINK_OUTAGE_CLOCK_SYNCED=yes",
                         "UPLINK_OUTAGE_REASONS=eth0:no-carrier wlan0:timeout", "UPLINK_OUTAGE_PRIMARY_BEFORE=eth0",
                         "UPLINK_OUTAGE_SEQUENCE=5"] {
            #expect(environment.contains(expected), "\(expected)")
        }
        event.kind = .verdict
        event.outage = nil
        #expect(event.environment.contains("UPLINK_OUTAGE_REASONS="))
        #expect(event.environment.contains("UPLINK_OUTAGE_DURATION_MS="))
        // An outage is never merged away like a verdict.
        var queue = HookQueue()
        var outage = event
        outage.kind = .outage
        queue.enqueue(outage)
        queue.enqueue(outage)
        #expect(queue.pending.count == 2)
    }

    @Test func theSummaryCountsTodayAndTheMonth() throws {
        // Today (local midnight at 1_764_633_600 here) one 30-s outage; earlier in the
        // month another of 60 s.
        let history = JournalHistory(records: [record(1, start: 1_764_633_600 - 86_400 * 3, seconds: 60),
                                               record(2, start: 1_764_633_600 + 3_600, seconds: 30)])
        let payload = AvailabilitySummary.payload(history, nowWallSeconds: 1_764_633_600 + 7_200,
                                                  dayStartWallSeconds: 1_764_633_600,
                                                  monthStartWallSeconds: 1_764_633_600 - 86_400 * 10)
        let today = try #require(payload.firstRange(of: #""today":{"#))
        let month = try #require(payload.firstRange(of: #""month":{"#))
        let todayText = payload[today.upperBound..<month.lowerBound]
        let monthText = payload[month.upperBound...]
        #expect(todayText.contains(#""site":{"availability_pct":99.583,"outages":1,"outage_seconds":30"#))
        #expect(monthText.contains(#""outages":2,"outage_seconds":90"#))
    }

    @Test func theSummarysPeriodsStartAtLocalMidnights() {
        let december2 = CivilDate(year: 2026, month: 12, day: 2).daysSinceEpoch * 86_400
        let december1 = CivilDate(year: 2026, month: 12, day: 1).daysSinceEpoch * 86_400
        // 14:00 UTC, one hour east of Greenwich: local midnight was 23:00 UTC the day before.
        let starts = AvailabilitySummary.periodStarts(at: december2 + 14 * 3_600, local: .fixed(offsetSeconds: 3_600))
        #expect(starts.day == december2 - 3_600)
        #expect(starts.month == december1 - 3_600)
        #expect(starts.nextDay == december2 + 86_400 - 3_600)
        // 23:30 UTC is already the 3rd there.
        let late = AvailabilitySummary.periodStarts(at: december2 + 23 * 3_600 + 1_800, local: .fixed(offsetSeconds: 3_600))
        #expect(late.day == december2 + 86_400 - 3_600)
    }

    @Test func homeAssistantGetsTheTwoAvailabilitySensorsOnlyWithAJournal() {
        var settings = MQTTSettings()
        settings.broker = MQTTBroker(host: "192.0.2.1", port: 1883, tls: false)
        settings.homeAssistant = true
        var plain = MQTTSession(settings: settings, nodeID: "gw1")
        let without = plain.connected(through: nil, now: 0).map(\.topic)
        #expect(!without.contains { $0.contains("availability_today") })
        var journaled = MQTTSession(settings: settings, nodeID: "gw1")
        journaled.announcesAvailability = true
        let configs = journaled.connected(through: nil, now: 0).filter { $0.topic.contains("availability_") }
        #expect(configs.map(\.topic) == ["homeassistant/sensor/gw1/availability_today/config",
                                         "homeassistant/sensor/gw1/availability_month/config"])
        #expect(configs[0].payload.contains(#""state_topic":"uplinkd/gw1/summary""#))
        #expect(configs[0].payload.contains(#""value_template":"{{ value_json.today.site.availability_pct }}""#))
        // The summary is retained, and sent again only when it changed.
        let first = journaled.summary(#"{"today":1}"#)
        #expect(first?.topic == "uplinkd/gw1/summary" && first?.retain == true)
        let same = journaled.summary(#"{"today":1}"#)
        let changed = journaled.summary(#"{"today":2}"#)
        #expect(same == nil && changed != nil)
    }
}
