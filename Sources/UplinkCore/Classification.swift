/// The judgement on a single probe.
public enum ProbeClass: Sendable, Equatable {
    /// The answer was exactly what the probe expects.
    case valid
    /// Something answered in place of the internet.
    case portal(reason: String, portalURL: String?)
    /// The link carried the request but the internet did not answer properly.
    case broken(reason: String)

    public var reason: String {
        switch self {
        case .valid: return "validated"
        case .portal(let reason, _): return reason
        case .broken(let reason): return reason
        }
    }
}

/// Classifies one probe's outcome by the rules of the design's verdict table.
public enum Classifier {
    /// A 2xx body no longer than this, where an empty 204 was expected, is a proxy's
    /// invention (for example "OK"), not a login page.
    public static let tinyBodyBytes = 64

    public static func classify(_ outcome: ProbeOutcome, for probe: ProbeSpec) -> ProbeClass {
        switch outcome {
        case .failure(let failure):
            return .broken(reason: failure.reason)
        case .response(let response):
            return classify(response, for: probe)
        case .dnsHijack:
            // Whoever answers for the name is the portal: a browser opening the probe
            // URL through this uplink lands on it.
            return .portal(reason: "dns-hijack", portalURL: probe.url.description)
        }
    }

    static func classify(_ response: ProbeResponse, for probe: ProbeSpec) -> ProbeClass {
        let status = response.status
        if [301, 302, 303, 307, 308].contains(status) {
            guard let location = response.location, !location.trimmingWhitespace.isEmpty else {
                return .broken(reason: "bad-proxy")
            }
            return .portal(reason: "redirect", portalURL: PortalHints.safeURL(probe.url.resolving(location)))
        }
        if status == 511 {
            return .portal(reason: "network-auth-required",
                           portalURL: PortalHints.portalURL(in: response.bodyText, base: probe.url)
                               ?? probe.url.description)
        }
        if isValid(response, for: probe.expectation) {
            return .valid
        }
        if (500...599).contains(status) {
            return .broken(reason: "bad-proxy")
        }
        if (200...299).contains(status) {
            let text = response.bodyText
            let hint = PortalHints.portalURL(in: text, base: probe.url)
            if hint != nil || PortalHints.looksLikeHTML(text) {
                return .portal(reason: "body-mismatch", portalURL: hint ?? probe.url.description)
            }
            if probe.expectation.expectsEmptyBody && response.body.count <= tinyBodyBytes {
                return .broken(reason: "bad-proxy")
            }
            return .portal(reason: "body-mismatch", portalURL: probe.url.description)
        }
        return .broken(reason: "unexpected-status")
    }

    /// Whether a response meets every check of an expectation.
    public static func isValid(_ response: ProbeResponse, for expectation: Expectation) -> Bool {
        guard response.status == expectation.status else { return false }
        if expectation.expectsEmptyBody && !response.body.isEmpty { return false }
        let text = response.bodyText
        if let equals = expectation.bodyEquals, text.trimmingWhitespace != equals.trimmingWhitespace {
            return false
        }
        if let contains = expectation.bodyContains, !text.contains(contains) { return false }
        if let pattern = expectation.bodyPattern, !pattern.matches(text) { return false }
        if expectation.validator != nil && response.validatorAccepted != true { return false }
        return true
    }
}

/// Finds where a portal wants the user to go, from the page it served.
public enum PortalHints {
    /// WISPr LoginURL first (it is the machine-readable one), then a meta refresh.
    public static func portalURL(in body: String, base: ProbeURL) -> String? {
        if let login = wisprLoginURL(in: body) { return safeURL(base.resolving(login)) }
        if let refresh = metaRefreshURL(in: body) { return safeURL(base.resolving(refresh)) }
        return nil
    }

    /// Longest portal URL kept; a longer one is cut (it only guides a login helper).
    public static let maximumURLBytes = 2_048

    /// A URL from the network made safe to log, print, put in an environment or a
    /// state-file field: spaces, control bytes and non-ASCII are percent-encoded.
    public static func safeURL(_ url: String) -> String {
        var result = ""
        for byte in url.utf8.prefix(maximumURLBytes) {
            if byte > 0x20 && byte < 0x7f {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return result
    }

    /// The `<LoginURL>` of a WISPr `WISPAccessGatewayParam` block.
    public static func wisprLoginURL(in body: String) -> String? {
        let page = FoldedBytes(body)
        guard page.find("wispaccessgatewayparam", from: 0) != nil,
              let open = page.find("<loginurl>", from: 0),
              let close = page.find("</loginurl>", from: open.upperBound) else { return nil }
        let url = decodeEntities(page.text(open.upperBound..<close.lowerBound).trimmingWhitespace)
        return url.isEmpty ? nil : url
    }

    /// The URL of `<meta http-equiv="refresh" content="N; url=...">`.
    public static func metaRefreshURL(in body: String) -> String? {
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
    public static func looksLikeHTML(_ body: String) -> Bool {
        let lowered = body.lowercased()
        return ["<html", "<!doctype html", "<body", "<form", "<head"].contains { lowered.contains($0) }
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
        guard text.contains("&") else { return text }
        var result = text
        for (entity, replacement) in [("&amp;", "&"), ("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">")] {
            result = result.components(separatedByString: entity).joined(separator: replacement)
        }
        return result
    }
}
