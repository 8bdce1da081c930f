/// One connectivity probe: what to fetch and what a good answer looks like.
package struct ProbeSpec: Hashable, Sendable {
    package var name: String
    package var url: ProbeURL
    package var expectation: Expectation
    /// Sent as the Authorization header. A secret: never logged nor written to state.
    package var authorization: String?
    /// Sent as the Accept header (the captive-portal API asks for its JSON), if any.
    package var accept: String?

    package init(name: String, url: ProbeURL, expectation: Expectation, authorization: String? = nil) {
        self.name = name
        self.url = url
        self.expectation = expectation
        self.authorization = authorization
    }
}

/// What a probe's answer must be to count as a success. Every check given must pass.
package struct Expectation: Hashable, Sendable {
    /// Expected HTTP status. Defaults: 200 when a body check is given, else 204.
    package var status: Int
    package var bodyEquals: String?
    package var bodyContains: String?
    package var bodyPattern: BodyPattern?
    /// An external command given the body on stdin; exit 0 means valid.
    package var validator: ValidatorCommand?

    package init(status: Int? = nil, bodyEquals: String? = nil, bodyContains: String? = nil,
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
    package var expectsEmptyBody: Bool {
        status == 204 && bodyEquals == nil && bodyContains == nil && bodyPattern == nil
    }
}

/// An external validator: an absolute path and its arguments, run without a shell.
package struct ValidatorCommand: Hashable, Sendable {
    package let path: String
    package let arguments: [String]

    package init(path: String, arguments: [String]) {
        self.path = path
        self.arguments = arguments
    }
}
