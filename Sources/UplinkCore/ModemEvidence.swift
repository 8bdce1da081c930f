/// The modem's own word about its uplink, at no cost in probe bytes: a state or a
/// registration that says it cannot carry data makes the uplink `down` at once. Its
/// silence proves nothing: a modem that may carry data is judged by the probes, and
/// states on the way somewhere (initialising, enabling) say nothing yet.
public enum ModemEvidence {
    /// Why `modem` cannot carry data now, or nil when it may.
    public static func cannotCarryData(_ modem: ModemFacts) -> Reason? {
        switch modem.state {
        case .failed:
            return modem.failedReason == .simMissing ? .simMissing : .modemFailed
        case .locked:
            return .simLocked
        case .disabled, .disabling:
            return .modemDisabled
        case .unknown, .initializing, .enabling:
            return nil
        case .enabled, .searching, .registered, .disconnecting, .connecting, .connected:
            break
        }
        if let registration = modem.registration {
            if !registration.isRegistered { return .modemNotRegistered }
        } else if modem.state == .enabled || modem.state == .searching {
            return .modemNotRegistered
        }
        // Registered: data flows through a connected bearer. A modem without bearers in
        // ModemManager has its data session kept by another tool, which says nothing.
        if !modem.bearers.isEmpty && !modem.bearers.contains(where: \.connected) { return .bearerDisconnected }
        return nil
    }

    /// Registered on a network (the recovery ladder's precondition): data may flow, or
    /// only its bearer is down.
    public static func isRegistered(_ modem: ModemFacts) -> Bool {
        switch cannotCarryData(modem) {
        case nil: return modem.state.rawValue >= ModemState.registered.rawValue
            || modem.registration?.isRegistered == true
        case .bearerDisconnected?: return true
        default: return false
        }
    }
}
