/// Substring search over UTF-8 bytes, for the core and the adapters.
///
/// The standard library's `contains(_: String)` and `firstRange(of:)` are defined in
/// `_StringProcessing`, the module of Swift Regex: one call to either links all of it
/// into the static binary (926 KiB). Comparing bytes is also what searching network
/// text wants: no Unicode normalisation of either side. A match of a whole valid UTF-8
/// needle always starts and ends on a scalar boundary (UTF-8 is self-synchronising).
package enum SubstringSearch {
    /// The offset in `haystack` at or after `start` where `needle` first begins.
    /// Knuth-Morris-Pratt: time linear in both lengths, so a long needle against a
    /// hostile body never costs their product. An empty needle matches at `start`.
    package static func firstOffset(of needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard start <= haystack.count else { return nil }
        guard !needle.isEmpty else { return start }
        guard haystack.count - start >= needle.count else { return nil }
        // border[i]: length of the longest proper prefix of needle[...i] that is also its suffix.
        var border = [Int](repeating: 0, count: needle.count)
        var length = 0
        for i in needle.indices.dropFirst() {
            while length > 0 && needle[i] != needle[length] { length = border[length - 1] }
            if needle[i] == needle[length] { length += 1 }
            border[i] = length
        }
        var matched = 0
        for i in start..<haystack.count {
            while matched > 0 && haystack[i] != needle[matched] { matched = border[matched - 1] }
            if haystack[i] == needle[matched] { matched += 1 }
            if matched == needle.count { return i + 1 - needle.count }
        }
        return nil
    }
}

extension StringProtocol {
    /// Whether `other` occurs in the text, byte for byte (see SubstringSearch).
    package func containsSubstring(_ other: some StringProtocol) -> Bool {
        SubstringSearch.firstOffset(of: Array(other.utf8), in: Array(utf8)) != nil
    }
}
