import UplinkPattern

/// A regular expression a body must match (`expect-regex`, PCRE2 syntax). Compiled
/// when the configuration is read, so a pattern PCRE2 refuses (or one too long or
/// nested too deep) is a configuration error, and searched within fixed bounds
/// (BoundedRegex.Limits.standard): the body comes from the network, and a search that
/// could run for seconds is stopped and reported, never waited for.
package struct BodyPattern: Hashable, Sendable {
    /// How a search ended.
    package enum Outcome: Sendable, Equatable {
        case matched
        case notMatched
        /// The search stopped at its bound (steps or backtracking memory) undecided.
        case limitReached
    }

    package let source: String
    let regex: BoundedRegex

    package init(_ source: String) throws(ValueError) {
        do {
            regex = try BoundedRegex(source)
        } catch {
            if error.offset == nil {
                throw ValueError("regular expression of \(error.description)")
            }
            throw ValueError("invalid regular expression '\(source.printableEscaped)': \(error.description)")
        }
        self.source = source
    }

    package func search(_ body: [UInt8]) -> Outcome {
        switch regex.search(body) {
        case .matched: return .matched
        case .notMatched: return .notMatched
        // `failed` is folded in: it cannot decide either, and is not expected.
        case .stepLimit, .memoryLimit, .failed: return .limitReached
        }
    }

    package func search(_ text: String) -> Outcome { search(Array(text.utf8)) }

    package static func == (lhs: BodyPattern, rhs: BodyPattern) -> Bool { lhs.source == rhs.source }
    package func hash(into hasher: inout Hasher) { hasher.combine(source) }
}
