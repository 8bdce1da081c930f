import Testing
import UplinkCore
import UplinkTestSupport

@Suite("trimmingWhitespace")
struct TrimmingTests {
    @Test func trimsSpacesTabsAndNewlines() {
        #expect("  a b\t".trimmingWhitespace == "a b")
        #expect("\n\nx\n".trimmingWhitespace == "x")
        #expect(" \t\r \n ".trimmingWhitespace == "")
        #expect("x\r".trimmingWhitespace == "x")
    }

    @Test("documented: CR and LF are trimmed, so a CRLF line end is too")
    func trimsCRLF() {
        // In Swift "\r\n" is one Character, equal to neither "\r" nor "\n".
        #expect("success\r\n".trimmingWhitespace == "success")
        #expect("\r\nvalue\r\n".trimmingWhitespace == "value")
        #expect(" \t\r\n ".trimmingWhitespace == "")
    }
}
