/// Finds where a portal wants the user to go, from the page it served.
package enum PortalHints {
    /// WISPr LoginURL first (it is the machine-readable one), then a meta refresh.
    package static func portalURL(in body: String, base: ProbeURL) -> String? {
        if let login = wisprLoginURL(in: body) { return safeURL(base.resolving(login)) }
        if let refresh = metaRefreshURL(in: body) { return safeURL(base.resolving(refresh)) }
        return nil
    }

    /// Longest portal URL kept; a longer one is cut (it only guides a login helper).
    package static let maximumURLBytes = 2_048

    /// A URL from the network made safe to log, print, put in an environment or a
    /// state-file field: spaces, control bytes and non-ASCII are percent-encoded.
    package static func safeURL(_ url: String) -> String {
        url.percentEncodingUnsafeBytes(limit: maximumURLBytes)
    }

    /// The `<LoginURL>` of a WISPr `WISPAccessGatewayParam` block.
    package static func wisprLoginURL(in body: String) -> String? {
        let page = FoldedBytes(body)
        guard page.find("wispaccessgatewayparam", from: 0) != nil,
              let open = page.find("<loginurl>", from: 0),
              let close = page.find("</loginurl>", from: open.upperBound) else { return nil }
        let url = decodeEntities(page.text(open.upperBound..<close.lowerBound).trimmingWhitespace)
        return url.isEmpty ? nil : url
    }

    /// The URL of `<meta http-equiv="refresh" content="N; url=...">`.
    package static func metaRefreshURL(in body: String) -> String? {
        let page = FoldedBytes(body)
        var searchFrom = 0
        while let tagStart = page.find("<meta", from: searchFrom) {
            guard let tagEnd = page.firstIndex(of: ">", from: tagStart.upperBound) else { return nil }
            searchFrom = tagEnd
            let tag = tagStart.lowerBound..<tagEnd
            guard page.find("http-equiv", in: tag) != nil, page.find("refresh", in: tag) != nil,
                  let content = page.find("content=", in: tag), content.upperBound < tagEnd else { continue }
            var valueStart = content.upperBound
            let quote = page.folded[valueStart]
            let quoted = quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'")
            if quoted { valueStart += 1 }
            var valueEnd = valueStart
            while valueEnd < tagEnd {
                let byte = page.folded[valueEnd]
                if quoted ? byte == quote : (byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d) { break }
                valueEnd += 1
            }
            // content="0; url=http://..." or content="0;URL='http://...'"
            guard let key = page.find("url=", in: valueStart..<valueEnd) else { continue }
            var url = page.text(key.upperBound..<valueEnd).trimmingWhitespace
            if let first = url.first, first == "'" || first == "\"" {
                url = String(url.dropFirst())
                if let last = url.last, last == first { url = String(url.dropLast()) }
            }
            url = decodeEntities(url)
            if !url.isEmpty { return url }
        }
        return nil
    }

    /// Whether a body is an HTML page (a login page), rather than a short text answer.
    package static func looksLikeHTML(_ body: String) -> Bool {
        let lowered = body.lowercased()
        return ["<html", "<!doctype html", "<body", "<form", "<head"].contains { lowered.containsSubstring($0) }
    }

    /// A page's bytes with ASCII letters folded to lower case and nothing else changed,
    /// so a position found in the folded bytes is the same position in the original
    /// (full Unicode lowercasing changes lengths, and portals control the page).
    struct FoldedBytes {
        let original: [UInt8]
        let folded: [UInt8]

        init(_ text: String) {
            original = Array(text.utf8)
            folded = original.map { $0 >= 0x41 && $0 <= 0x5a ? $0 + 0x20 : $0 }
        }

        func find(_ needle: String, from start: Int) -> Range<Int>? {
            find(needle, in: start..<folded.count)
        }

        /// The first occurrence of an ASCII, lower-case `needle` within `range`.
        func find(_ needle: String, in range: Range<Int>) -> Range<Int>? {
            let pattern = Array(needle.utf8)
            guard !pattern.isEmpty, range.count >= pattern.count else { return nil }
            var index = range.lowerBound
            while index + pattern.count <= range.upperBound {
                if folded[index] == pattern[0] && folded[index..<index + pattern.count].elementsEqual(pattern) {
                    return index..<index + pattern.count
                }
                index += 1
            }
            return nil
        }

        func firstIndex(of character: Character, from start: Int) -> Int? {
            guard let byte = character.asciiValue, start <= folded.count else { return nil }
            return folded[start...].firstIndex(of: byte)
        }

        func text(_ range: Range<Int>) -> String {
            String(decoding: original[range], as: UTF8.self)
        }
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var result = text
        for (entity, replacement) in [("&amp;", "&"), ("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">")] {
            result = result.components(separatedByString: entity).joined(separator: replacement)
        }
        return result
    }
}
