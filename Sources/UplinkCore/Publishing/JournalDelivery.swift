/// The outage journal's records on their way to the MQTT broker (`PREFIX/NODE/journal`,
/// QoS 1, not retained): each record waits, on disk and here, until the broker
/// acknowledged it, so records made while the site was cut off go out after it is
/// back, oldest first, and an agent restarted meanwhile sends them from the journal.
/// The delivered mark (every record up to it acknowledged) is what survives a restart.
/// The pure half: the adapter reads the journal and the mark, hands the messages to
/// the client (which keeps an unacknowledged one and sends it again after a
/// reconnect) and reports the acknowledgements.
package struct JournalDelivery: Sendable, Equatable {
    /// Every record up to this number is acknowledged, or was given up (past the
    /// bound, as the journal's compaction gives it up).
    package private(set) var deliveredThrough: Int
    /// Records above the mark, in number order.
    private var waiting: [JournalRecord] = []
    /// Numbers handed to the client and not yet acknowledged.
    private var handed: Set<Int> = []
    /// Numbers acknowledged out of order, above the mark.
    private var acknowledgedAbove: Set<Int> = []
    /// Numbers the broker refused (or the client could not take): handed again only
    /// after the next connect, not with every new record.
    private var heldBack: Set<Int> = []
    /// Most records that wait (the journal's own bound): past it the oldest are
    /// given up, as they are gone from the file too.
    package let limit: Int

    /// `records`: the journal as read at the start; `mark`: the delivered mark kept on
    /// disk. A mark past the journal's last record means the journal was started
    /// anew (deleted, another file): everything in it is new then.
    package init(journal records: [JournalRecord], deliveredThrough mark: Int, limit: Int = 5_000) {
        let numbered = records.filter { $0.sequence != nil }
        let last = numbered.compactMap(\.sequence).max() ?? 0
        deliveredThrough = mark > last ? 0 : max(0, mark)
        self.limit = max(1, limit)
        add(numbered)
    }

    /// Records waiting: made, not yet acknowledged.
    package var waitingCount: Int { waiting.count }

    /// Records the journal appended since.
    package mutating func add(_ records: [JournalRecord]) {
        for record in records {
            guard let sequence = record.sequence, sequence > deliveredThrough,
                  !waiting.contains(where: { $0.sequence == sequence }) else { continue }
            waiting.append(record)
        }
        waiting.sort { $0.sequence! < $1.sequence! }
        while waiting.count > limit {
            let given = waiting.removeFirst().sequence!
            handed.remove(given)
            heldBack.remove(given)
            acknowledgedAbove.remove(given)
            deliveredThrough = given
        }
        advance()
    }

    /// Records to hand to the client now (connected): those it does not hold yet,
    /// oldest first; each is held from here on.
    package mutating func take() -> [JournalRecord] {
        let fresh = waiting.filter { !handed.contains($0.sequence!) && !heldBack.contains($0.sequence!) }
        for record in fresh { handed.insert(record.sequence!) }
        return fresh
    }

    /// The client could not take the message of record `sequence`, or the broker
    /// refused it: handed again after the next connect.
    package mutating func release(_ sequence: Int) {
        guard handed.remove(sequence) != nil else { return }
        heldBack.insert(sequence)
    }

    /// A new connection: what was held back is handed again.
    package mutating func connected() {
        heldBack.removeAll()
    }

    /// The broker acknowledged record `sequence`; true when the mark moved (it is
    /// worth saving).
    package mutating func acknowledged(_ sequence: Int) -> Bool {
        guard handed.remove(sequence) != nil else { return false }
        acknowledgedAbove.insert(sequence)
        return advance()
    }

    /// Moves the mark over the acknowledged records at the head; true when it moved.
    @discardableResult
    private mutating func advance() -> Bool {
        let before = deliveredThrough
        while let next = waiting.first?.sequence, acknowledgedAbove.contains(next) {
            acknowledgedAbove.remove(next)
            waiting.removeFirst()
            deliveredThrough = next
        }
        return deliveredThrough != before
    }

    /// The message of one record: `uplinkd history --json`'s object.
    package static func message(_ record: JournalRecord, topics: MQTTTopics) -> MQTTMessage {
        MQTTMessage(topic: topics.journal, payload: record.json.serialized(), qos: 1, retain: false)
    }

    /// The mark's file (`journal-file` + `.delivered`): one line, `delivered N`.
    package static func markText(_ mark: Int) -> String { "delivered \(mark)\n" }

    /// The mark in a file's text; nil when it holds none (0 is then the mark: every
    /// record is sent again, and a subscriber tells repeats by `seq`).
    package static func mark(fromText text: String) -> Int? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count == 2, words[0] == "delivered", let mark = Int(words[1]), mark >= 0 else { return nil }
        return mark
    }
}
