import Testing
import UplinkCore
import UplinkLinux

/// README's reference table of the state's facts is the code's one table
/// (`StateFacts`), written out: a fact added, renamed or described anew in one and not
/// the other fails here, with the table README should have.
@Suite("README state facts")
struct StateFactsReadmeTests {
    private static let root = "/" + String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")
    private static let begin = "<!-- facts: begin -->\n"
    private static let end = "<!-- facts: end -->"

    @Test func readmeListsEveryFactAsTheCodeHasIt() throws {
        let readme = String(decoding: try SmallFile.readAll("\(Self.root)/README.md", limit: 1 << 20), as: UTF8.self)
        let table = try #require(Self.between(readme), "README.md has no '\(Self.begin)' ... '\(Self.end)' block")
        #expect(table == StateFacts.referenceTable + "\n",
                "README.md's table of facts differs from StateFacts; it should read:\n\(StateFacts.referenceTable)")
    }

    /// The comparison itself, on a made-up README: a block that lacks one row fails.
    @Test func aMissingRowIsSeen() throws {
        let rows = StateFacts.referenceTable.split(separator: "\n").dropLast().joined(separator: "\n")
        let made = "# x\n" + Self.begin + rows + "\n" + Self.end + "\n"
        #expect(try #require(Self.between(made)) != StateFacts.referenceTable + "\n")
    }

    private static func between(_ text: String) -> String? {
        guard let start = text.firstRange(of: begin), let stop = text[start.upperBound...].firstRange(of: end) else {
            return nil
        }
        return String(text[start.upperBound..<stop.lowerBound])
    }
}
