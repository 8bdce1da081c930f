/// The line format of the agent's own files (the state file, the data plans' file):
/// `#` comments, a `format N` line, and lines of space-separated fields whose first
/// field says what the line is, "-" for a field that holds nothing. POSIX sh and awk
/// read it as easily as the agent does.
///
/// One reader for both files, so a hand-edited or damaged file is refused the same way
/// wherever it is read: with the line and a sentence, never a trap.
package enum LineFormat {
    /// Why a file was refused.
    package struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Counted from 1; 0 when the file as a whole is wrong (no `format` line).
        package let line: Int
        package let message: String

        package init(line: Int, message: String) {
            self.line = line
            self.message = message
        }

        package var description: String { "line \(line): \(message)" }
    }

    /// One line with fields, other than the `format` line.
    package struct Line: Sendable, Equatable {
        /// Counted from 1, comments and empty lines included, as an editor counts.
        package let number: Int
        /// Never empty.
        package let fields: [String]

        /// What the line is: its first field ("uplink", "plan", "written"...).
        package var keyword: String { fields[0] }

        /// Field `index`, or nil when the line is shorter: columns appended by a later
        /// version are missing from an older file.
        package func field(_ index: Int) -> String? {
            fields.indices.contains(index) ? fields[index] : nil
        }

        /// Field `index`, nil when it says "-" or the line is shorter.
        package func optionalField(_ index: Int) -> String? {
            field(index).flatMap { $0 == "-" ? nil : $0 }
        }

        /// Field `index` as a whole number within `range`, nil when the line is shorter,
        /// the field is not a number (or too large for `Number`) or outside the range:
        /// a number read from a file must not overflow what is computed from it.
        package func integer<Number: FixedWidthInteger>(_ index: Int,
                                                        in range: ClosedRange<Number> = Number.min...Number.max) -> Number? {
            guard let text = field(index), let value = Number(text), range.contains(value) else { return nil }
            return value
        }

        /// Refuses a line too short for the fields its keyword must have. More are
        /// fine: new fields are only ever appended, and an older reader ignores them.
        package func requireFields(atLeast count: Int, else message: String) throws(DecodeError) {
            guard fields.count >= count else { throw error(message) }
        }

        /// A refusal of this line.
        package func error(_ message: String) -> DecodeError {
            DecodeError(line: number, message: message)
        }
    }

    /// Reads `text`, a file of `version` (`fileKind`, such as "state file", names it in
    /// the refusal of a file without a `format` line): calls `body` with each line that
    /// has fields, in order, skipping comments and the `format` line. Lines are read
    /// before the `format` line is required, so the first error in the file is the one
    /// reported; the file is refused at the first `format` line of another version.
    package static func read(_ text: String, version: Int, fileKind: String,
                             _ body: (Line) throws(DecodeError) -> Void) throws(DecodeError) {
        var sawFormat = false
        var number = 0
        for row in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let fields = row.split(separator: " ").map(String.init)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            let line = Line(number: number, fields: fields)
            guard first == "format" else {
                try body(line)
                continue
            }
            guard line.integer(1, in: version...version) != nil else {
                throw line.error("unsupported format '\(fields.dropFirst().joined(separator: " ").printableEscaped)'")
            }
            sawFormat = true
        }
        guard sawFormat else { throw DecodeError(line: 0, message: "no 'format' line: not an uplinkd \(fileKind)") }
    }
}
