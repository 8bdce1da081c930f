import Testing
import UplinkCore

@Suite("Line format reader")
struct LineFormatTests {
    private typealias DecodeError = LineFormat.DecodeError

    /// Every line `LineFormat.read` hands on, for a file of version 1.
    private func lines(_ text: String) throws(DecodeError) -> [LineFormat.Line] {
        var lines: [LineFormat.Line] = []
        try LineFormat.read(text, version: 1, fileKind: "test file") { lines.append($0) }
        return lines
    }

    /// The one line of a version 1 file holding `text` after its format line.
    private func line(_ text: String) throws -> LineFormat.Line {
        let read = try lines("format 1\n\(text)\n")
        try #require(read.count == 1)
        return read[0]
    }

    private func refusal(_ text: String) -> DecodeError? {
        do {
            _ = try lines(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func linesComeInOrderWithTheirNumbersWithoutCommentsBlanksAndTheFormatLine() throws {
        let read = try lines("# a comment\n\nformat 1\nwritten 5\n  # indented comment\n   \nuplink eth0 - x\n")
        #expect(read.map(\.number) == [4, 7])
        #expect(read.map(\.keyword) == ["written", "uplink"])
        #expect(read[1].fields == ["uplink", "eth0", "-", "x"])
    }

    @Test func fieldsAreSplitOnSpacesOnly() throws {
        let read = try line("  key  a\tb   c ")
        #expect(read.fields == ["key", "a\tb", "c"])
    }

    @Test func linesBeforeTheFormatLineAreReadToo() throws {
        #expect(try lines("written 1\nformat 1\n").map(\.keyword) == ["written"])
    }

    @Test func anEmptyFileIsRefusedAsAWhole() {
        let expected = DecodeError(line: 0, message: "no 'format' line: not an uplinkd test file")
        #expect(refusal("") == expected)
        #expect(refusal("\n\n\n") == expected)
        #expect(refusal("# uplinkd state, format 1\n") == expected)
        #expect(expected.description == "line 0: no 'format' line: not an uplinkd test file")
    }

    @Test func aFileWithoutItsFormatLineIsRefused() {
        #expect(refusal("hello\nuplink eth0\n") == DecodeError(line: 0, message: "no 'format' line: not an uplinkd test file"))
        // "format" must be the whole first field.
        #expect(refusal("formats 1\n#format 1\n")?.line == 0)
    }

    @Test func anotherVersionIsRefusedAtItsLine() {
        #expect(refusal("# c\n\nformat 2\n") == DecodeError(line: 3, message: "unsupported format '2'"))
        #expect(refusal("format 1\nformat 0\n") == DecodeError(line: 2, message: "unsupported format '0'"))
        #expect(refusal("format\n") == DecodeError(line: 1, message: "unsupported format ''"))
        #expect(refusal("format one two\n") == DecodeError(line: 1, message: "unsupported format 'one two'"))
        #expect(refusal("format 1.0\n")?.message == "unsupported format '1.0'")
        #expect(refusal("format 99999999999999999999999\n")?.message == "unsupported format '99999999999999999999999'")
        #expect(refusal("format 2\n")?.description == "line 1: unsupported format '2'")
    }

    @Test func theRefusalQuotesWhatTheFileSaysEscaped() {
        #expect(refusal("format 1\u{1B}[2J\n")?.message == "unsupported format '1\\u{1b}[2J'")
        #expect(refusal("format \u{E9}t\u{E9}\n")?.message == "unsupported format '\\u{e9}t\\u{e9}'")
    }

    @Test func extraFieldsOnTheFormatLineAreLaterVersionsBusiness() throws {
        #expect(try lines("format 1 with-more\nk v\n").count == 1)
    }

    @Test func theFirstErrorInTheFileIsTheOneReported() {
        #expect(refusal("format 2\nformat x\n") == DecodeError(line: 1, message: "unsupported format '2'"))
        let error: DecodeError?
        do {
            try LineFormat.read("format 3\nbad\n", version: 1, fileKind: "test file") { line throws(DecodeError) in
                throw line.error("bad line")
            }
            error = nil
        } catch let refusal {
            error = refusal
        }
        #expect(error == DecodeError(line: 1, message: "unsupported format '3'"))
    }

    @Test func aLineRefusedByTheCallerEndsTheReading() {
        var visited: [Int] = []
        #expect(throws: DecodeError(line: 2, message: "bad line")) {
            try LineFormat.read("a\nbad\nc\nformat 2\n", version: 1, fileKind: "test file") { line throws(DecodeError) in
                visited.append(line.number)
                if line.keyword == "bad" { throw line.error("bad line") }
            }
        }
        #expect(visited == [1, 2])
    }

    @Test func tooFewFieldsAreRefusedAtTheirLine() throws {
        let short = try line("plan wwan0")
        #expect(throws: DecodeError(line: 2, message: "malformed plan line")) {
            try short.requireFields(atLeast: 3, else: "malformed plan line")
        }
        try short.requireFields(atLeast: 2, else: "malformed plan line")
    }

    @Test func moreFieldsThanKnownAreKeptForLaterVersions() throws {
        let long = try line("plan wwan0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16")
        try long.requireFields(atLeast: 3, else: "malformed plan line")
        #expect(long.fields.count == 18)
        #expect(long.field(17) == "16")
    }

    @Test func fieldsPastTheEndAndDashesAreNone() throws {
        let read = try line("k a - b")
        #expect(read.field(1) == "a" && read.field(2) == "-" && read.field(4) == nil)
        #expect(read.optionalField(1) == "a" && read.optionalField(2) == nil && read.optionalField(3) == "b")
        #expect(read.optionalField(4) == nil && read.optionalField(1_000) == nil)
        #expect(read.field(-1) == nil && read.optionalField(-1) == nil)
    }

    @Test func integersWithinTheirRange() throws {
        let read = try line("k 0 17 -3 100 101 -")
        #expect(read.integer(1, in: 0...100) == 0)
        #expect(read.integer(2, in: 0...100) == 17)
        #expect(read.integer(3, in: 0...100) == nil)
        let anyInt: Int? = read.integer(3)
        #expect(anyInt == -3)
        #expect(read.integer(4, in: 0...100) == 100)
        #expect(read.integer(5, in: 0...100) == nil)
        #expect(read.integer(6, in: 0...100) == nil)
        #expect(read.integer(7, in: 0...100) == nil)
    }

    @Test func nonNumbersAreNone() throws {
        let read = try line("k x 1.5 0x10 1e3 12abc \u{0661} ٣ ")
        for index in 1..<read.fields.count {
            #expect(read.integer(index, in: Int.min...Int.max) == nil, "field \(index): \(read.fields[index])")
        }
    }

    @Test func hugeNumbersAreNoneNotATrap() throws {
        let read = try line("k \(Int.max) 9223372036854775808 \(UInt64.max) 18446744073709551616 \(String(repeating: "9", count: 4_000)) -9223372036854775809")
        #expect(read.integer(1, in: 0...Int.max) == Int.max)
        #expect(read.integer(1, in: 0...(1 << 56)) == nil)
        #expect(read.integer(2, in: 0...Int.max) == nil)
        #expect(read.integer(2, in: 0...UInt64.max) == 9_223_372_036_854_775_808)
        #expect(read.integer(3, in: 0...UInt64.max) == UInt64.max)
        #expect(read.integer(3, in: Int.min...Int.max) == nil)
        #expect(read.integer(4, in: 0...UInt64.max) == nil)
        #expect(read.integer(5, in: 0...UInt64.max) == nil)
        #expect(read.integer(6, in: Int.min...Int.max) == nil)
        #expect(read.integer(1, in: 0...UInt64.max) == UInt64(Int.max))
    }

    @Test func controlCharactersStayInTheirFields() throws {
        let read = try line("k \u{0}\u{7F} \u{1B}[2J\u{FFFD} x")
        #expect(read.fields == ["k", "\u{0}\u{7F}", "\u{1B}[2J\u{FFFD}", "x"])
    }

    /// In Swift "\r\n" is one Character, not "\n": a file with CRLF line ends is one
    /// long line, refused rather than misread.
    @Test func crlfLineEndsAreRefused() {
        #expect(refusal("format 1\r\nk 1\r\n")?.message == "unsupported format '1\\u{d}\\u{a}k 1\\u{d}\\u{a}'")
    }

    @Test func aLongFileIsReadLineByLine() throws {
        let text = "format 1\n" + String(repeating: "k 1\n", count: 10_000)
        let read = try lines(text)
        #expect(read.count == 10_000 && read.last?.number == 10_001)
    }
}
