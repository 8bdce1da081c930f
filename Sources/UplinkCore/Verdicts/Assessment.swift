/// A verdict with its machine-readable reason and, for `captive`, where the portal is.
public struct Assessment: Sendable, Equatable {
    public var verdict: Verdict
    public var reason: Reason
    public var portalURL: String?
    /// The portal URL is the LoginURL of a WISPr block the portal served: a WISPr
    /// login may post credentials there (never to a URL from a redirect or a page).
    package var portalIsWISPrLogin = false

    package init(_ verdict: Verdict, reason: Reason, portalURL: String? = nil) {
        self.verdict = verdict
        self.reason = reason
        self.portalURL = portalURL
    }
}
