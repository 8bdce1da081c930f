/// A step of the modem recovery ladder, in the order they are taken.
package enum RecoveryStep: String, Sendable, CaseIterable, Comparable {
    /// Disconnect the data bearer and connect it again with its own properties.
    case reconnect
    /// Reset the modem (it re-enumerates), then connect again.
    case reset
    /// Ask a site script to cut the modem's power (`recover` hook event); uplinkd
    /// itself never reboots anything.
    case powerCycle = "power-cycle"

    package static func < (a: RecoveryStep, b: RecoveryStep) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// When the ladder climbs, per uplink or kind (`recover`, `recover-after`,
/// `reset-after`, `power-cycle-after`): each step counts from the moment the uplink
/// stopped being online while its modem stayed registered.
package struct RecoverySettings: Sendable, Equatable {
    package var enabled = true
    package var recoverAfterMilliseconds = 120_000
    /// Nil: no reset step.
    package var resetAfterMilliseconds: Int? = 600_000
    /// Nil (the default): no power-cycle step.
    package var powerCycleAfterMilliseconds: Int?
    /// Resets are this far apart at least, whatever the episodes.
    package static let resetSpacingMilliseconds = 1_800_000

    package init() {}
}

/// One modem's recovery ladder: while its modem says it is registered and the uplink
/// is not online, reconnect the bearer after `recover-after`, reset the modem after
/// `reset-after`, ask for a power cycle after `power-cycle-after`. One episode climbs
/// each step once; the ladder starts again only after the uplink was online for
/// `recover-after`. Pure: the agent core feeds it what it sees and the time.
package struct RecoveryLadder: Sendable, Equatable {
    /// When the current episode began: the uplink not online, the modem registered.
    package private(set) var troubleSinceMilliseconds: Int?
    /// Since when the uplink has been online without a break.
    package private(set) var onlineSinceMilliseconds: Int?
    /// The highest step taken in this episode.
    package private(set) var step: RecoveryStep?
    package private(set) var lastResetMilliseconds: Int?
    /// Steps taken since the agent started.
    package private(set) var stepsTaken = 0

    package init() {}

    /// What the agent sees at `now`; returns the step to take now, if any.
    package mutating func observe(online: Bool, registered: Bool, at now: Int,
                                 settings: RecoverySettings) -> RecoveryStep? {
        if online {
            troubleSinceMilliseconds = nil
            let since = onlineSinceMilliseconds ?? now
            onlineSinceMilliseconds = since
            if step != nil && now - since >= settings.recoverAfterMilliseconds { step = nil }
            return nil
        }
        onlineSinceMilliseconds = nil
        guard settings.enabled else {
            troubleSinceMilliseconds = nil
            return nil
        }
        // An episode starts only while the modem is registered (an unregistered modem
        // waits for its network), but once a step was taken the modem is expected to
        // drop its registration on the way back, and the episode's clock runs on.
        if !registered && step == nil {
            troubleSinceMilliseconds = nil
            return nil
        }
        let start = troubleSinceMilliseconds ?? now
        troubleSinceMilliseconds = start
        guard registered, let next = nextStep(settings), let due = dueMilliseconds(of: next, settings), now >= due else {
            return nil
        }
        step = next
        stepsTaken += 1
        if next == .reset { lastResetMilliseconds = now }
        return next
    }

    /// When the next step falls due, if one can (the agent's next wake-up).
    package func nextDueMilliseconds(_ settings: RecoverySettings) -> Int? {
        guard settings.enabled, troubleSinceMilliseconds != nil, let next = nextStep(settings) else { return nil }
        return dueMilliseconds(of: next, settings)
    }

    private func nextStep(_ settings: RecoverySettings) -> RecoveryStep? {
        switch step {
        case nil: return .reconnect
        case .reconnect?:
            if settings.resetAfterMilliseconds != nil { return .reset }
            return settings.powerCycleAfterMilliseconds != nil ? .powerCycle : nil
        case .reset?: return settings.powerCycleAfterMilliseconds != nil ? .powerCycle : nil
        case .powerCycle?: return nil
        }
    }

    private func dueMilliseconds(of next: RecoveryStep, _ settings: RecoverySettings) -> Int? {
        guard let start = troubleSinceMilliseconds else { return nil }
        switch next {
        case .reconnect:
            return start + settings.recoverAfterMilliseconds
        case .reset:
            guard let after = settings.resetAfterMilliseconds else { return nil }
            let spaced = lastResetMilliseconds.map { $0 + RecoverySettings.resetSpacingMilliseconds } ?? Int.min
            return max(start + after, spaced)
        case .powerCycle:
            return settings.powerCycleAfterMilliseconds.map { start + $0 }
        }
    }
}
