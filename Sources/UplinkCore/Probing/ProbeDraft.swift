/// A probe being assembled from `key = value` pairs (a [probe] section or `--url`
/// options on the command line).
public struct ProbeDraft: Sendable {
    public var url: ProbeURL?
    public var status: Int?
    public var bodyEquals: String?
    public var bodyContains: String?
    public var bodyPattern: BodyPattern?
    public var validator: ValidatorCommand?
    public var authorization: String?

    public init() {}

    /// Sets one key (`url`, `expect-status`, ...; see `ConfigurationKeys.probe`).
    public mutating func apply(_ key: String, _ value: String) throws(ValueError) {
        try ConfigurationKeys.probe.apply(key, value, to: &self)
    }

    public struct BuildError: Error {
        public let key: String?
        public let message: String
    }

    public func build(name: String) throws(BuildError) -> ProbeSpec {
        guard let url else { throw BuildError(key: "url", message: "has no url") }
        // A secret sent in clear text over every uplink, portals included, is not a secret.
        if authorization != nil && url.scheme != .https {
            throw BuildError(key: "authorization", message: "an Authorization header needs an https:// url")
        }
        return ProbeSpec(name: name, url: url,
                         expectation: Expectation(status: status, bodyEquals: bodyEquals, bodyContains: bodyContains,
                                                  bodyPattern: bodyPattern, validator: validator),
                         authorization: authorization)
    }
}
