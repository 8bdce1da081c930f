/// The judgement on a single probe.
package enum ProbeClass: Sendable, Equatable {
    /// The answer was exactly what the probe expects.
    case valid
    /// Something answered in place of the internet.
    case portal(reason: Reason, portalURL: String?)
    /// The link carried the request but the internet did not answer properly.
    case broken(reason: Reason)

    package var reason: Reason {
        switch self {
        case .valid: return .validated
        case .portal(let reason, _): return reason
        case .broken(let reason): return reason
        }
    }
}

/// Classifies one probe's outcome by the rules of the design's verdict table.
package enum Classifier {
    /// A 2xx body no longer than this, where an empty 204 was expected, is a proxy's
    /// invention (for example "OK"), not a login page.
    package static let tinyBodyBytes = 64

    package static func classify(_ outcome: ProbeOutcome, for probe: ProbeSpec) -> ProbeClass {
        switch outcome {
        case .failure(let failure):
            return .broken(reason: failure.reason)
        case .response(let response):
            return classify(response, for: probe)
        case .dnsHijack(_, let answer):
            return classifyHijacked(answer, for: probe)
        case .handshake:
            // A sign of life only; a liveness round never decides a verdict.
            return .valid
        }
    }

    /// The DNS answer came first and decides the verdict: whoever answers for the
    /// name is the portal, whatever its HTTP says (even a valid answer: a portal may
    /// pass the probe's own path through). Its HTTP answer only says where to log in:
    /// a redirect's Location, a meta refresh or a WISPr LoginURL. Else, or with no
    /// answer, the probe URL, which a browser on this uplink opens onto the portal.
    static func classifyHijacked(_ answer: ProbeResponse?, for probe: ProbeSpec) -> ProbeClass {
        let fallback = probe.url.description
        guard let answer, case .portal(_, let portalURL?) = classify(answer, for: probe) else {
            return .portal(reason: .dnsHijack, portalURL: fallback)
        }
        return .portal(reason: .dnsHijack, portalURL: portalURL)
    }

    static func classify(_ response: ProbeResponse, for probe: ProbeSpec) -> ProbeClass {
        let status = response.status
        if [301, 302, 303, 307, 308].contains(status) {
            guard let location = response.location, !location.trimmingWhitespace.isEmpty else {
                return .broken(reason: .badProxy)
            }
            return .portal(reason: .redirect, portalURL: PortalHints.safeURL(probe.url.resolving(location)))
        }
        if status == 511 {
            return .portal(reason: .networkAuthRequired,
                           portalURL: PortalHints.portalURL(in: response.bodyText, base: probe.url)
                               ?? probe.url.description)
        }
        switch validate(response, for: probe.expectation) {
        case .valid:
            return .valid
        case .patternLimit:
            // Neither success nor evidence of a portal: reading it as body-mismatch
            // would run portal hooks on what may be the expected page. A reason of
            // its own shows the operator which probe's pattern to rewrite.
            return .broken(reason: .patternLimit)
        case .invalid:
            break
        }
        if (500...599).contains(status) {
            return .broken(reason: .badProxy)
        }
        if (200...299).contains(status) {
            let text = response.bodyText
            let hint = PortalHints.portalURL(in: text, base: probe.url)
            if hint != nil || PortalHints.looksLikeHTML(text) {
                return .portal(reason: .bodyMismatch, portalURL: hint ?? probe.url.description)
            }
            if probe.expectation.expectsEmptyBody && response.body.count <= tinyBodyBytes {
                return .broken(reason: .badProxy)
            }
            return .portal(reason: .bodyMismatch, portalURL: probe.url.description)
        }
        return .broken(reason: .unexpectedStatus)
    }

    /// Whether a response meets every check of an expectation.
    package static func isValid(_ response: ProbeResponse, for expectation: Expectation) -> Bool {
        validate(response, for: expectation) == .valid
    }

    /// What the checks of an expectation say about a response. The cheap checks come
    /// first, so a body they already refuse is never searched with the pattern.
    package static func validate(_ response: ProbeResponse, for expectation: Expectation) -> Validation {
        guard response.status == expectation.status else { return .invalid }
        if expectation.expectsEmptyBody && !response.body.isEmpty { return .invalid }
        let text = response.bodyText
        if let equals = expectation.bodyEquals, text.trimmingWhitespace != equals.trimmingWhitespace {
            return .invalid
        }
        if let contains = expectation.bodyContains, !text.containsSubstring(contains) { return .invalid }
        if let pattern = expectation.bodyPattern {
            switch pattern.search(response.body) {
            case .matched: break
            case .notMatched: return .invalid
            case .limitReached: return .patternLimit
            }
        }
        if expectation.validator != nil && response.validatorAccepted != true { return .invalid }
        return .valid
    }

    /// The result of `validate`.
    package enum Validation: Sendable, Equatable {
        case valid
        case invalid
        /// The body's pattern search stopped at its bound before it could decide.
        case patternLimit
    }
}
