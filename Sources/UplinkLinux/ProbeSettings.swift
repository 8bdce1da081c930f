import UplinkCore

/// How probes are sent: the round's time limit, and the configuration's body limit,
/// scheme rule and User-Agent.
public struct ProbeSettings: Sendable {
    public var timeoutMilliseconds: Int
    public var bodyLimitBytes: Int
    public var httpsOnly: Bool
    public var userAgent: String

    public init(configuration: Configuration, timeoutMilliseconds: Int) {
        self.timeoutMilliseconds = timeoutMilliseconds
        bodyLimitBytes = configuration.bodyLimitBytes
        httpsOnly = configuration.httpsOnly
        userAgent = "uplinkd/\(UplinkVersion.string) (connectivity check)"
    }
}
