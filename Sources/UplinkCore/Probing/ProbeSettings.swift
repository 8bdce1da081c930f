/// How probes are sent: the round's time limit, and the configuration's body limit,
/// scheme rule and User-Agent.
package struct ProbeSettings: Sendable, Equatable {
    package var timeoutMilliseconds: Int
    package var bodyLimitBytes: Int
    package var httpsOnly: Bool
    package var userAgent: String
    /// PEM certificates for HTTPS (`[check] ca-file`); nil: libcurl's default bundle.
    package var caFilePath: String?
    /// Only the TCP handshake, closed with a reset (a liveness round).
    package var handshakeOnly = false

    package init(configuration: Configuration, timeoutMilliseconds: Int) {
        self.timeoutMilliseconds = timeoutMilliseconds
        bodyLimitBytes = configuration.bodyLimitBytes
        httpsOnly = configuration.httpsOnly
        userAgent = "uplinkd/\(UplinkVersion.string) (connectivity check)"
        caFilePath = configuration.caFilePath
    }
}
