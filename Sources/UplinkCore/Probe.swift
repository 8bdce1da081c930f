/// One connectivity probe: what to fetch and what a good answer looks like.
public struct ProbeSpec: Hashable, Sendable {
    public var name: String
    public var url: ProbeURL
    public var expectation: Expectation
    /// Sent as the Authorization header. A secret: never logged nor written to state.
    public var authorization: String?

    public init(name: String, url: ProbeURL, expectation: Expectation, authorization: String? = nil) {
        self.name = name
        self.url = url
        self.expectation = expectation
        self.authorization = authorization
    }
}

/// What a probe's answer must be to count as a success. Every check given must pass.
public struct Expectation: Hashable, Sendable {
    /// Expected HTTP status. Defaults: 200 when a body check is given, else 204.
    public var status: Int
    public var bodyEquals: String?
    public var bodyContains: String?
    public var bodyPattern: BodyPattern?
    /// An external command given the body on stdin; exit 0 means valid.
    public var validator: ValidatorCommand?

    public init(status: Int? = nil, bodyEquals: String? = nil, bodyContains: String? = nil,
                bodyPattern: BodyPattern? = nil, validator: ValidatorCommand? = nil) {
        let hasBodyCheck = bodyEquals != nil || bodyContains != nil || bodyPattern != nil
        self.status = status ?? (hasBodyCheck ? 200 : 204)
        self.bodyEquals = bodyEquals
        self.bodyContains = bodyContains
        self.bodyPattern = bodyPattern
        self.validator = validator
    }

    /// True when the expected answer carries no body (a 204 page): a 2xx with a small
    /// body is then a proxy's invention, not a portal.
    public var expectsEmptyBody: Bool {
        status == 204 && bodyEquals == nil && bodyContains == nil && bodyPattern == nil
    }
}

/// A regular expression a body must match (Swift Regex syntax, as in PCRE).
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

/// An external validator: an absolute path and its arguments, run without a shell.
public struct ValidatorCommand: Hashable, Sendable {
    public let path: String
    public let arguments: [String]

    public init(path: String, arguments: [String]) {
        self.path = path
        self.arguments = arguments
    }
}

/// The built-in probe set: several independent operators over plain HTTP, so that a
/// single blocked or allow-listed endpoint cannot decide alone.
public enum DefaultProbes {
    public static let all: [ProbeSpec] = [
        make("apple", "http://captive.apple.com/hotspot-detect.html",
             Expectation(status: 200, bodyContains: "<BODY>Success</BODY>")),
        make("google", "http://connectivitycheck.gstatic.com/generate_204",
             Expectation(status: 204)),
        make("firefox", "http://detectportal.firefox.com/success.txt",
             Expectation(status: 200, bodyEquals: "success")),
        make("microsoft", "http://www.msftconnecttest.com/connecttest.txt",
             Expectation(status: 200, bodyEquals: "Microsoft Connect Test")),
        make("debian", "http://network-test.debian.org/nm",
             Expectation(status: 200, bodyEquals: "NetworkManager is online")),
    ]

    private static func make(_ name: String, _ url: String, _ expectation: Expectation) -> ProbeSpec {
        // The literals above are fixed and valid; a failure here is a programming error.
        ProbeSpec(name: name, url: try! ProbeURL(parsing: url), expectation: expectation)
    }
}
