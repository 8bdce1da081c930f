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
        }
    }

    static func classify(_ response: ProbeResponse, for probe: ProbeSpec) -> ProbeClass {
        let status = response.status
        if [301, 302, 303, 307, 308].contains(status) {
            guard let location = response.location, !location.trimmingWhitespace.isEmpty else {
                return .broken(reason: "bad-proxy")
            }
            return .portal(reason: "redirect", portalURL: probe.url.resolving(location))
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
        if let login = wisprLoginURL(in: body) { return base.resolving(login) }
        if let refresh = metaRefreshURL(in: body) { return base.resolving(refresh) }
        return nil
    }

    /// The `<LoginURL>` of a WISPr `WISPAccessGatewayParam` block.
    public static func wisprLoginURL(in body: String) -> String? {
        let lowered = body.lowercased()
        guard lowered.contains("wispaccessgatewayparam"),
              let open = lowered.firstRange(of: "<loginurl>") else { return nil }
        let afterOpen = lowered[open.upperBound...]
        guard let close = afterOpen.firstRange(of: "</loginurl>") else { return nil }
        // Same offsets in the original text: lowercased() keeps ASCII lengths, and
        // a page that changes length when lowercased is not trusted for a URL.
        guard lowered.utf8.count == body.utf8.count else { return nil }
        let start = lowered.utf8.distance(from: lowered.startIndex, to: open.upperBound)
        let end = lowered.utf8.distance(from: lowered.startIndex, to: close.lowerBound)
        let bytes = Array(body.utf8)[start..<end]
        let url = decodeEntities(String(decoding: bytes, as: UTF8.self).trimmingWhitespace)
        return url.isEmpty ? nil : url
    }

    /// The URL of `<meta http-equiv="refresh" content="N; url=...">`.
    public static func metaRefreshURL(in body: String) -> String? {
        let lowered = body.lowercased()
        guard lowered.utf8.count == body.utf8.count else { return nil }
        let original = Array(body.utf8)
        var searchFrom = lowered.startIndex
        while let tagStart = lowered[searchFrom...].firstRange(of: "<meta") {
            guard let tagEnd = lowered[tagStart.upperBound...].firstIndex(of: ">") else { return nil }
            let tag = lowered[tagStart.lowerBound..<tagEnd]
            searchFrom = tagEnd
            guard tag.contains("http-equiv"), tag.contains("refresh"),
                  let content = tag.firstRange(of: "content=") else { continue }
            var index = content.upperBound
            guard index < tag.endIndex else { continue }
            let quote = tag[index]
            let quoted = quote == "\"" || quote == "'"
            if quoted { index = tag.index(after: index) }
            let valueEnd = tag[index...].firstIndex(where: { quoted ? $0 == quote : ($0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r\n") }) ?? tag.endIndex
            let startOffset = lowered.utf8.distance(from: lowered.startIndex, to: index)
            let endOffset = lowered.utf8.distance(from: lowered.startIndex, to: valueEnd)
            let value = String(decoding: original[startOffset..<endOffset], as: UTF8.self)
            // content="0; url=http://..." or content="0;URL='http://...'"
            guard let urlKey = value.lowercased().firstRange(of: "url=") else { continue }
            let offset = value.lowercased().utf8.distance(from: value.lowercased().startIndex, to: urlKey.upperBound)
            var url = String(decoding: Array(value.utf8)[offset...], as: UTF8.self).trimmingWhitespace
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

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = text
        for (entity, replacement) in [("&amp;", "&"), ("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">")] {
            result = result.components(separatedByString: entity).joined(separator: replacement)
        }
        return result
    }
}
