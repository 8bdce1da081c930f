import Testing
@testable import UplinkCore
import UplinkLinux

/// uplinkd-state(5)'s list of the state's facts is the code's one table
/// (`StateFacts`), written out as roff: a fact added, renamed or described anew in one
/// and not the other fails here, with the block the page should have.
@Suite("State facts in uplinkd-state(5)")
struct StateFactsManPageTests {
    private static let page = "packaging/debian/uplinkd-state.5"
    private static let begin = ".\\\" facts: begin\n"
    private static let end = ".\\\" facts: end"

    @Test func thePageListsEveryFactAsTheCodeHasIt() throws {
        let text = try ManPageOutline.read(Self.page)
        let block = try #require(Self.between(text), "\(Self.page) has no '\(Self.begin)' ... '\(Self.end)' block")
        #expect(block == StateFacts.manualTable + "\n",
                "\(Self.page)'s list of facts differs from StateFacts; it should read:\n\(StateFacts.manualTable)")
    }

    /// The comparison itself, on a made-up page: a block that lacks one line fails.
    @Test func aMissingLineIsSeen() throws {
        let lines = StateFacts.manualTable.split(separator: "\n").dropLast().joined(separator: "\n")
        let made = ".TH X 5\n" + Self.begin + lines + "\n" + Self.end + "\n"
        #expect(try #require(Self.between(made)) != StateFacts.manualTable + "\n")
    }

    /// Each fact is one entry, tagged with its name, under the subsection of its
    /// subject: what a reader of the page finds is what the state file holds.
    @Test func everyFactIsOneEntryUnderItsSubject() {
        let outline = ManPageOutline(page: ".SH FACTS\n" + StateFacts.manualTable.replacing(".SS ", with: ".SH "))
        #expect(outline.tags["Node facts"] == StateFacts.node.map(\.name))
        #expect(outline.tags["Uplink facts"] == StateFacts.uplink.map(\.name))
    }

    /// The table is roff that groff reads without a preprocessor: no markdown
    /// backtick left, nothing outside ASCII, and no text line roff would take for a
    /// request.
    @Test func theTableIsPlainRoff() {
        let table = StateFacts.manualTable
        #expect(!table.contains("`"))
        let ascii = table.unicodeScalars.allSatisfy(\.isASCII)
        #expect(ascii)
        for line in table.split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
            #expect([".SS", ".TP", ".BI"].contains(String(line.prefix { $0 != " " })), "not a macro of the table: \(line)")
        }
    }

    /// How a meaning becomes roff, one rule at a time, so that a rule that stops
    /// holding is named.
    @Test func meaningsAreEscapedForRoff() {
        #expect(RoffText.sentence("the primary, `-` when none") == "The primary, \\fB\\-\\fR when none.")
        #expect(RoffText.sentence("`last-resort` or `down`") == "\\fBlast\\-resort\\fR or \\fBdown\\fR.")
        #expect(RoffText.sentence("ModemManager's 0–100 figure") == "ModemManager's 0\\[u2013]100 figure.")
        #expect(RoffText.sentence(".5 of a \\ (a flap-damping penalty).") == "\\&.5 of a \\e (a flap-damping penalty).")
        #expect(RoffText.entry(name: "rtt_ms", kind: .whole, meaning: "smoothed")
                == [".TP", ".BI \"rtt_ms \" number", "Smoothed."])
    }

    private static func between(_ text: String) -> String? {
        guard let start = text.firstRange(of: begin), let stop = text[start.upperBound...].firstRange(of: end) else {
            return nil
        }
        return String(text[start.upperBound..<stop.lowerBound])
    }
}
