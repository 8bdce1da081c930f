import UplinkCore

/// How probes are sent; everything here comes from the configuration.
public struct ProbeSettings: Sendable {
    public var timeoutMilliseconds: Int
    public var bodyLimitBytes: Int
    public var httpsOnly: Bool
    public var userAgent: String

    public init(configuration: Configuration) {
        timeoutMilliseconds = configuration.probeTimeoutMilliseconds
        bodyLimitBytes = configuration.bodyLimitBytes
        httpsOnly = configuration.httpsOnly
        userAgent = "uplinkd/\(UplinkVersion.string) (connectivity check)"
    }
}
