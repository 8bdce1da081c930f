import Testing
@testable import UplinkCore
import UplinkTestSupport

/// The byte-wise search that replaces the standard library's (it kept
/// Swift Regex linked into the binary).
@Suite("Substring search")
struct SubstringSearchTests {
    private func naive(_ needle: [UInt8], _ haystack: [UInt8], from start: Int) -> Int? {
        guard start <= haystack.count else { return nil }
        guard !needle.isEmpty else { return start }
        guard haystack.count - start >= needle.count else { return nil }
        return (start...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    @Test func agreesWithTheNaiveSearch() {
        // Small alphabets make overlapping prefixes (the case KMP's borders handle) common.
        var seed: UInt64 = 0x9e37_79b9_7f4a_7c15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(seed >> 33) % bound
        }
        for _ in 0..<2_000 {
            let haystack = (0..<next(40)).map { _ in UInt8(ascii: "a") + UInt8(next(2)) }
            let needle = (0..<next(6)).map { _ in UInt8(ascii: "a") + UInt8(next(2)) }
            let start = next(haystack.count + 2)
            #expect(SubstringSearch.firstOffset(of: needle, in: haystack, from: start) == naive(needle, haystack, from: start),
                    "\(needle) in \(haystack) from \(start)")
        }
    }

    @Test func containsSubstring() {
        #expect("<html><body>".containsSubstring("<body"))
        #expect(!"<html><bod".containsSubstring("<body"))
        #expect("abc".containsSubstring(""))
        #expect("lease { interface \"eth0\"; }".containsSubstring("interface \"eth0\""))
        #expect(!"lease { interface \"eth01\"; }".containsSubstring("interface \"eth0\""))
        // Bytes, not characters: no normalisation, so a decomposed é is not the composed one.
        #expect(!"cafe\u{301}".containsSubstring("caf\u{e9}"))
        #expect("caf\u{e9} au lait".containsSubstring("\u{e9} au"))
    }

    @Test func componentsSplitOnEveryOccurrence() {
        #expect("a&amp;b&amp;&amp;c".components(separatedByString: "&amp;") == ["a", "b", "", "c"])
        #expect("no entity".components(separatedByString: "&amp;") == ["no entity"])
        #expect("::1".components(separatedByString: "::") == ["", "1"])
        #expect("\u{e9}::\u{e9}".components(separatedByString: "::") == ["\u{e9}", "\u{e9}"])
        #expect("abc".components(separatedByString: "") == ["abc"])
        #expect(PortalHints.decodeEntities("a=1&amp;b=&quot;2&quot;") == "a=1&b=\"2\"")
    }
}
