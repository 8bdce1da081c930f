/// The modem's own word about its uplink, at no cost in probe bytes: a state or a
/// registration that says it cannot carry data makes the uplink `down` at once. Its
/// silence proves nothing: a modem that may carry data is judged by the probes. A
/// modem on its way somewhere (initialising, enabling, connecting) keeps the word it
/// last gave, so one that is coming back does not flap through `online` on the way.
package enum ModemEvidence {
    /// Why `modem` cannot carry data now, or nil when it may. `dataManaged`: its data
    /// sessions have been ModemManager's (a bearer was seen connected), so "registered
    /// without a connected bearer" means no data even when no bearer is listed (a modem
    /// just back from a reset). `previous`: what the modem said last.
    package static func cannotCarryData(_ modem: ModemFacts, dataManaged: Bool = false, previous: Reason? = nil) -> Reason? {
        switch modem.state {
        case .failed:
            return modem.failedReason == .simMissing ? .simMissing : .modemFailed
        case .locked:
            return .simLocked
        case .disabled, .disabling:
            return .modemDisabled
        case .unknown, .initializing, .enabling, .connecting, .disconnecting:
            return previous
        case .enabled, .searching, .registered, .connected:
            break
        }
        if let registration = modem.registration {
            if !registration.isRegistered { return .modemNotRegistered }
        } else if modem.state == .enabled || modem.state == .searching {
            return .modemNotRegistered
        }
        // Registered: data flows through a connected bearer. A modem whose data session
        // another tool keeps has no bearer in ModemManager, which then says nothing.
        if !modem.bearers.contains(where: \.connected) && (dataManaged || !modem.bearers.isEmpty) {
            return .bearerDisconnected
        }
        return nil
    }

    /// Registered on a network (the recovery ladder's precondition), given what the
    /// modem says (`cannotCarryData`): data may flow, or only its bearer is down.
    package static func isRegistered(_ modem: ModemFacts, evidence: Reason?) -> Bool {
        switch evidence {
        case nil: return modem.state.rawValue >= ModemState.registered.rawValue || modem.registration?.isRegistered == true
        case .bearerDisconnected?: return true
        default: return false
        }
    }
}
