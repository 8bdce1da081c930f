/// A probe being assembled from `key = value` pairs (a [probe] section or `--url`
/// options on the command line).
package struct ProbeDraft: Sendable {
    package var url: ProbeURL?
    package var status: Int?
    package var bodyEquals: String?
    package var bodyContains: String?
    package var bodyPattern: BodyPattern?
    package var validator: ValidatorCommand?
    package var authorization: String?

    package init() {}

    /// Sets one key (`url`, `expect-status`, ...; see `ConfigurationKeys.probe`).
    package mutating func apply(_ key: String, _ value: String) throws(ValueError) {
        try ConfigurationKeys.probe.apply(key, value, to: &self)
    }

    package struct BuildError: Error {
        package let key: String?
        package let message: String
    }

    package func build(name: String) throws(BuildError) -> ProbeSpec {
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
