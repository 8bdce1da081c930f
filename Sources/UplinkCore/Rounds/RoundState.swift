/// Why an uplink owes a full round: what put it in doubt. Only a full round (the
/// quorum of the probe set) settles a doubt, so the reason stays while full rounds run
/// and second looks are taken, until one decides. When more evidence arrives while a
/// doubt is open, the first reason is kept: it is the one a validated round disproves.
package enum FullRoundReason: String, Sendable, Equatable, CaseIterable {
    /// The link changed in a way that can change the answer: it appeared, came back
    /// (carrier, admin up), or gained an address or a default route.
    case linkChanged = "link-changed"
    /// Another event touched the link (an extra address gone, a second route changed).
    case linkTouched = "link-touched"
    /// The hooks told of a portal finished (the portal-login hook may have logged in).
    case hookFinished = "hook-finished"
    case lightRoundFailed = "light-round-failed"
    /// A liveness round's handshake failed.
    case livenessFailed = "liveness-failed"
    /// A light round found online a family that the last full round had not.
    case familyBack = "family-back"
    case verificationFailed = "verification-failed"
    /// Packets left the primary with nothing coming back (passive stall detection).
    case stallAlarm = "stall-alarm"
    /// One packet left the primary and nothing came back for several round trips (a
    /// quiet client's request; `TrafficMonitor`'s lone-packet rule).
    case lonePacket = "lone-packet"
    /// A recovery step connected the uplink's modem again.
    case modemReconnected = "modem-reconnected"

    /// Whether the reason is evidence against the uplink's health. Evidence puts it in
    /// doubt at once, even while a round runs (that round's figures wait for the doubt
    /// to settle), and on the primary the backup that would take over is verified
    /// while the full round confirms. A new link or a hook's request only asks for a
    /// fresh look.
    var suspectsUplink: Bool {
        switch self {
        case .linkChanged, .hookFinished, .modemReconnected: return false
        case .linkTouched, .lightRoundFailed, .livenessFailed, .familyBack, .verificationFailed, .stallAlarm,
             .lonePacket: return true
        }
    }

    /// Whether the doubt brings a cold backup's parked bearer up at once (its minute
    /// of dialling overlapping the confirmation) and has it verified meanwhile. Not
    /// for one unanswered packet: that rule's false alarms would dial and probe the
    /// metered backup every time.
    var wakesColdBackups: Bool { self != .lonePacket }

    /// Whether the full round confirms a suspicion that the uplink passes nothing,
    /// and so may use time limits below the usual floor (see `AgentCore.plan`).
    var confirmsFailure: Bool {
        switch self {
        case .stallAlarm, .lonePacket, .lightRoundFailed, .livenessFailed, .verificationFailed: return true
        case .linkChanged, .linkTouched, .hookFinished, .familyBack, .modemReconnected: return false
        }
    }
}

/// A round the core started and waits for: only a report of this generation may decide.
struct RoundInFlight: Sendable, Equatable {
    var generation: Int
    var purpose: RoundPurpose
    /// The plan's exchange limit: how long its probes could wait for an answer.
    var exchangeLimitMilliseconds: Int
}

/// What an uplink's probing is doing now.
enum RoundState: Sendable, Equatable {
    /// Between rounds: the schedule says when the next one is due.
    case idle
    case running(RoundInFlight)
    /// Running, and a full round was asked for meanwhile (for this reason): it starts
    /// as soon as this one ends.
    case rerunPending(RoundInFlight, FullRoundReason)

    var inFlight: RoundInFlight? {
        switch self {
        case .idle: return nil
        case .running(let round), .rerunPending(let round, _): return round
        }
    }

    var isIdle: Bool { self == .idle }
}

/// Where an uplink stands as a backup that may have to take over: the selector wants a
/// recent validated round before promoting it.
enum Verification: Sendable, Equatable {
    case none
    /// A verification round is wanted before anything else is probed on it: it is
    /// about to take over, or would if the primary failed.
    case wanted
    /// Its verification round failed: not a candidate until a full round validates.
    case failed
}

/// A doubt looked at more than once (see `SecondLook`): the looks so far, merged.
struct LooksSoFar: Sendable, Equatable {
    var merged: RoundReport
    var count: Int
}
