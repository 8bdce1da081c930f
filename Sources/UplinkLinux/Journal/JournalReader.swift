import Glibc
import UplinkCore

/// Reads the outage journal for `uplinkd history` and `availability`, without a
/// running agent: every record it can read, and each line it cannot, by number.
package enum JournalReader {
    /// The file's records and the problems of the lines skipped; a missing file is an
    /// empty journal (an agent that never recorded anything), any other failure an error.
    /// With `nowWallSeconds`, the periods the checkpoint beside it holds open are
    /// added (`ongoing`), lasting until now while the agent runs (its checkpoint
    /// younger than `freshSeconds`).
    package static func read(_ path: String, nowWallSeconds: Int? = nil,
                             freshSeconds: Int = 1_200) throws(SystemError) -> (history: JournalHistory, problems: [String]) {
        var bytes: [UInt8] = []
        do {
            bytes = try SmallFile.readAll(path, limit: 64 << 20)
        } catch {
            // No journal yet: nothing has ended, though a period may be open.
            guard error.errno == ENOENT else { throw error }
        }
        var (records, problems) = decoded(bytes, path: path)
        var ongoing: [JournalRecord] = []
        if let now = nowWallSeconds, let text = SmallFile.read(JournalSettings.checkpointPath(ofJournal: path), limit: 1 << 20) {
            do {
                ongoing = try JournalCheckpoint(text: text).withoutRecorded(Array(records.suffix(64)))
                    .ongoing(nowWallSeconds: now, freshSeconds: freshSeconds)
            } catch {
                problems.append("\(path).checkpoint: \(error) (periods still open left out)")
            }
        }
        return (JournalHistory(records: records, ongoing: ongoing), problems)
    }

    /// The records as written (times not corrected), for delivery: lines that cannot
    /// be read are skipped (`history` names them); a missing file has none.
    package static func records(_ path: String) -> [JournalRecord] {
        guard let bytes = try? SmallFile.readAll(path, limit: 64 << 20) else { return [] }
        return decoded(bytes, path: path).records
    }

    /// Every record of the file's bytes, and each line that is none, by number.
    private static func decoded(_ bytes: [UInt8], path: String) -> (records: [JournalRecord], problems: [String]) {
        var records: [JournalRecord] = []
        var problems: [String] = []
        let text = String(decoding: bytes, as: UTF8.self)
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            do {
                if let record = try JournalLine.decode(line) { records.append(record) }
            } catch {
                problems.append("\(path):\(index + 1): \(error)")
            }
        }
        return (records, problems)
    }
}
