/// Something hooks are told about: a verdict change of one uplink, or a change of the
/// primary uplink.
public struct HookEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case verdict
        case primary
    }

    public var kind: Kind
    public var interface: InterfaceName
    public var interfaceKind: InterfaceKind
    public var verdict: Verdict
    public var previousVerdict: Verdict
    public var reason: Reason
    public var portalURL: String?
    public var primary: InterfaceName?
    public var previousPrimary: InterfaceName?
    public var wallSeconds: Int
    /// Why the primary changed (primary events).
    public var primaryReason: PrimaryChangeReason?
    /// The uplink's measured quality, when there is any.
    public var quality: QualityFigures?

    public init(kind: Kind, interface: InterfaceName, interfaceKind: InterfaceKind, verdict: Verdict, previousVerdict: Verdict,
                reason: Reason, portalURL: String?, primary: InterfaceName?, previousPrimary: InterfaceName?, wallSeconds: Int) {
        self.kind = kind
        self.interface = interface
        self.interfaceKind = interfaceKind
        self.verdict = verdict
        self.previousVerdict = previousVerdict
        self.reason = reason
        self.portalURL = portalURL
        self.primary = primary
        self.previousPrimary = previousPrimary
        self.wallSeconds = wallSeconds
    }

    /// The hook's environment (besides PATH). For a primary event the interface fields
    /// describe the new primary, or the previous one when there is none.
    public var environment: [String] {
        [
            "UPLINK_EVENT=\(kind.rawValue)",
            "UPLINK_INTERFACE=\(interface)",
            "UPLINK_KIND=\(interfaceKind.rawValue)",
            "UPLINK_VERDICT=\(verdict.rawValue)",
            "UPLINK_PREVIOUS=\(previousVerdict.rawValue)",
            "UPLINK_REASON=\(reason.rawValue)",
            "UPLINK_PORTAL_URL=\(portalURL ?? "")",
            "UPLINK_PRIMARY=\(primary?.value ?? "")",
            "UPLINK_PREVIOUS_PRIMARY=\(previousPrimary?.value ?? "")",
            "UPLINK_TIME=\(wallSeconds)",
            "UPLINK_PRIMARY_REASON=\(primaryReason?.rawValue ?? "")",
            "UPLINK_RTT_MS=\(quality?.roundTripMilliseconds.map(String.init) ?? "")",
            "UPLINK_LOSS_PCT=\(quality?.lossPercent.map(String.init) ?? "")",
        ]
    }
}
