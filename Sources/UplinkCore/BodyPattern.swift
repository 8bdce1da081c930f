/// A regular expression a body must match (Swift Regex syntax, as in PCRE).
// @unchecked: `Regex` is not marked Sendable because of its generic output type, but
// this one is never mutated after `init` and only used to match; the standard library
// builds its compiled program lazily with an atomic compare-and-exchange, so sharing a
// configuration (the embedding API hands one to the agent's thread) is safe.
public struct BodyPattern: Hashable, @unchecked Sendable {
    public let source: String
    let regex: Regex<AnyRegexOutput>

    public init(_ source: String) throws {
        self.source = source
        self.regex = try Regex(source)
    }

    public func matches(_ text: String) -> Bool {
        (try? regex.firstMatch(in: text)) != nil
    }

    public static func == (lhs: BodyPattern, rhs: BodyPattern) -> Bool { lhs.source == rhs.source }
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }
}
