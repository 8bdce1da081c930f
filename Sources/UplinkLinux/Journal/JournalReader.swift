import Glibc
import UplinkCore

/// Reads the outage journal for `uplinkd history` and `availability`, without a
/// running agent: every record it can read, and each line it cannot, by number.
package enum JournalReader {
    /// The file's records and the problems of the lines skipped; a missing file is an
    /// empty journal (an agent that never recorded anything), any other failure an error.
    package static func read(_ path: String) throws(SystemError) -> (history: JournalHistory, problems: [String]) {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.readAll(path, limit: 64 << 20)
        } catch {
            if error.errno == ENOENT { return (JournalHistory(records: []), []) }
            throw error
        }
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
        return (JournalHistory(records: records), problems)
    }
}
