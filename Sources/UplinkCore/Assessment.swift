/// A verdict with its machine-readable reason and, for `captive`, where the portal is.
public struct Assessment: Sendable, Equatable {
    public var verdict: Verdict
    public var reason: Reason
    public var portalURL: String?

    public init(_ verdict: Verdict, reason: Reason, portalURL: String? = nil) {
        self.verdict = verdict
        self.reason = reason
        self.portalURL = portalURL
    }
}
