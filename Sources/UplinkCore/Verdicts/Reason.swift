/// Why a verdict is what it is: the machine-readable reasons of README's reasons
/// table, in one place. The raw value is what outputs, hooks and the state file show.
public enum Reason: String, Sendable, CaseIterable {
    // online
    case validated

    // captive
    case redirect
    case networkAuthRequired = "network-auth-required"
    case bodyMismatch = "body-mismatch"
    case dnsHijack = "dns-hijack"
    /// The network's captive-portal API (RFC 8908) says the session is held.
    case capport

    // limited
    case timeout
    case refused
    case unreachable
    case reset
    case tls
    case dnsFailed = "dns-failed"
    case badProxy = "bad-proxy"
    case unexpectedStatus = "unexpected-status"
    case bindFailed = "bind-failed"
    /// An `expect-regex` search stopped at its bound before it could decide. Not portal
    /// evidence: the body may well be the expected page and the pattern the problem.
    case patternLimit = "pattern-limit"
    case error
    /// Some probes validated, fewer than the threshold, and none failed for a reason.
    case belowThreshold = "below-threshold"
    /// Every probe of the set is an IP literal of the other family.
    case noProbeForFamily = "no-probe-for-family"

    // down, from link facts, in the order they are checked
    case noSuchInterface = "no-such-interface"
    case adminDown = "admin-down"
    case noCarrier = "no-carrier"
    case noAddress = "no-address"
    case linkLocalOnly = "link-local-only"
    case noRoute = "no-route"
    /// The configuration no longer selects the interface as an uplink.
    case notAnUplink = "not-an-uplink"

    // down, from the modem's own word (ModemManager), checked after the link facts
    case modemDisabled = "modem-disabled"
    case modemFailed = "modem-failed"
    case simMissing = "sim-missing"
    case simLocked = "sim-locked"
    /// Idle, searching, denied, or emergency calls only.
    case modemNotRegistered = "modem-not-registered"
    /// Registered, but none of the data bearers ModemManager keeps for it is connected.
    case bearerDisconnected = "bearer-disconnected"
    /// A cold backup whose data bearer the agent keeps disconnected while another
    /// uplink is primary (`standby-bearer = disconnected`); connected when needed.
    case standby

    // unknown
    case starting
    /// The link is usable; the next probe round decides.
    case needsProbe = "needs-probe"
    case noProbes = "no-probes"
    /// A stop event with no primary to describe.
    case stopping
    /// A reason this version does not know, read from a state file a newer version wrote.
    case unrecognized

    package init(token: String) {
        self = Reason(rawValue: token) ?? .unrecognized
    }

    /// A modem fault no recovery step of the agent causes: a failed modem, a SIM
    /// missing or locked (a step passes through disabled, unregistered and
    /// disconnected on its way back; never through these).
    var isModemFault: Bool {
        switch self {
        case .modemFailed, .simMissing, .simLocked: return true
        default: return false
        }
    }
}
