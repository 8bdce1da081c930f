/// How probes are sent: the round's time limit, and the configuration's body limit,
/// scheme rule and User-Agent.
public struct ProbeSettings: Sendable, Equatable {
    public var timeoutMilliseconds: Int
    public var bodyLimitBytes: Int
    public var httpsOnly: Bool
    public var userAgent: String
    /// PEM certificates for HTTPS (`[check] ca-file`); nil: libcurl's default bundle.
    public var caFilePath: String?
    /// Only the TCP handshake, closed with a reset (a liveness round).
    public var handshakeOnly = false

    public init(configuration: Configuration, timeoutMilliseconds: Int) {
        self.timeoutMilliseconds = timeoutMilliseconds
        bodyLimitBytes = configuration.bodyLimitBytes
        httpsOnly = configuration.httpsOnly
        userAgent = "uplinkd/\(UplinkVersion.string) (connectivity check)"
        caFilePath = configuration.caFilePath
    }
}
