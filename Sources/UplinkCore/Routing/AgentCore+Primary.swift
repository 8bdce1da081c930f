/// The primary, overall and per family, and the bookkeeping of verdict changes that
/// feeds it (flap damping, the time health must last).
extension AgentCore {
    mutating func reselectPrimary(now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        latestMilliseconds = max(latestMilliseconds, at)
        let before = PrimaryTransition.Side(overall: selector.primary, families: familyPrimaries)
        var notes: [AgentNote] = []
        for name in dampings.keys.sorted() where dampings[name]!.update(at: at, settings: policy.damping) {
            notes.append(.released(name, reuseLimit: policy.damping.reuseLimit))
        }
        let candidates = uplinks.values.map { candidate(for: $0, now: now) }
        let overallChanged = selector.select(from: candidates, policy: policy, now: at)
        var familyReason: PrimaryChangeReason?
        for family in AddressFamily.allCases {
            let candidates = familyCandidates(family, now: now)
            guard familySelectors[family]!.select(from: candidates, policy: policy, now: at) else { continue }
            familyReason = familyReason ?? familySelectors[family]!.changeReason
        }
        hurryHeldDownProofs(now: now)
        guard overallChanged || familyReason != nil else { return notes.map(Action.note) }
        if overallChanged, let primary = selector.primary {
            // A new primary starts with a fresh view of its traffic.
            uplinks[primary]?.traffic.restart()
        }
        if overallChanged { primaryRolesChanged(from: before.overall, now: now) }
        notes += selector.passedOverSuppressed.map(AgentNote.passedOver)
        let transition = PrimaryTransition(before: before, after: .init(overall: selector.primary, families: familyPrimaries))
        let reason = overallChanged ? selector.changeReason : familyReason
        guard let event = primaryEvent(transition, reason: reason, now: now) else { return notes.map(Action.note) }
        return [.runHook(event)] + notes.map(Action.note)
    }

    /// The candidates for one family's primary. The uplink's own verdict, with its
    /// hysteresis, decides whether it is online at all; a family drops out on its own
    /// only while another family carries the uplink (its IPv6 broken, its IPv4 fine).
    /// When every family fails at once the uplink is in doubt as a whole, and all its
    /// families leave together with it.
    private func familyCandidates(_ family: AddressFamily, now: Instant) -> [PrimarySelector.Candidate] {
        uplinks.values.compactMap { uplink -> PrimarySelector.Candidate? in
            guard let verdict = uplink.machine.families[family]?.verdict else { return nil }
            var candidate = candidate(for: uplink, now: now)
            let anotherFamilyWorks = uplink.machine.families.contains { $0.key != family && $0.value.verdict == .online }
            if verdict != .online && anotherFamilyWorks { candidate.verdict = verdict }
            return candidate
        }
    }

    /// An uplink waiting out its hold-down proves itself with a light round every
    /// couple of seconds, so a link that keeps dropping out is caught before it takes
    /// over again rather than after.
    private mutating func hurryHeldDownProofs(now: Instant) {
        let at = now.monotonicMilliseconds
        for name in Set(([selector] + familySelectors.values).flatMap(\.heldDown)).sorted() {
            guard var uplink = uplinks[name], uplink.round.isIdle, let due = uplink.schedule.nextDueMilliseconds else { continue }
            let proving = (uplink.lastRoundMilliseconds ?? at) + provingIntervalMilliseconds(uplink.settings)
            if proving < due {
                uplink.schedule.postpone(until: max(at, proving))
                uplinks[name] = uplink
            }
        }
    }

    /// How the selector sees an uplink now.
    func candidate(for uplink: Uplink, now: Instant) -> PrimarySelector.Candidate {
        let at = now.monotonicMilliseconds
        let damping = dampings[uplink.name] ?? FlapDamping()
        let thresholds = policy.quality
        let quality = uplink.quality
        let settled = at - quality.sinceMilliseconds >= policy.degradedForMilliseconds
        let figures = uplink.figures
        let clear = (figures?.lossPercent ?? 0) * 2 < thresholds.lossPercent
            && (figures?.roundTripMilliseconds ?? 0) * 2 < thresholds.roundTripMilliseconds
        let onlineSince = uplink.machine.since.monotonicMilliseconds
        var candidate = PrimarySelector.Candidate(
            name: uplink.name, kind: uplink.kind, verdict: uplink.machine.verdict,
            onlineSinceMilliseconds: max(onlineSince, damping.releasedMilliseconds ?? Int.min,
                                         quality.degraded ? Int.min : quality.sinceMilliseconds,
                                         uplink.holdDownRestartMilliseconds ?? Int.min),
            // Held down as well: an uplink back from suppression, or healthy again
            // after a degradation (even one online since start-up).
            recovered: uplink.machine.previousVerdict != .unknown || damping.releasedMilliseconds != nil
                || quality.sinceMilliseconds > onlineSince,
            fresh: isFresh(uplink, now: now), excluded: uplink.verification == .failed)
        candidate.suppressed = damping.suppressed
        candidate.degraded = quality.degradationLasted(forMilliseconds: policy.degradedForMilliseconds, thresholds: thresholds,
                                                    onlineFamilies: { uplink.machine.families[$0]?.verdict == .online }, at: now)
        candidate.degradedNow = quality.degraded
        candidate.healthy = !quality.degraded && settled && clear
        candidate.metered = uplink.metered
        let cap = capRole(of: uplink)
        candidate.lastResort = cap.lastResort
        candidate.excluded = candidate.excluded || cap.excluded
        candidate.cappedOut = cap.excluded
        standbyCandidate(&candidate, uplink)
        return candidate
    }

    /// Between the light rounds of an uplink waiting out its hold-down.
    private func provingIntervalMilliseconds(_ settings: ProbingSettings) -> Int {
        min(settings.intervalMilliseconds, max(settings.suspectIntervalMilliseconds, policy.holdDownMilliseconds / 15))
    }

    /// A verdict changed: the hook event, and its bookkeeping. Coming online starts the
    /// time health must last for; leaving `online` is a flap (damping).
    mutating func verdictChanged(_ uplink: inout Uplink, from previous: Verdict, now: Instant) -> [Action] {
        let event = Action.runHook(verdictEvent(uplink, previous: previous, now: now))
        if uplink.isOnline {
            uplink.quality.cameOnline(at: now)
            return [event]
        }
        // A bearer parked for a cold standby is no flap.
        guard previous == .online, uplink.machine.assessment.reason != .standby else { return [event] }
        let at = now.monotonicMilliseconds
        let settings = policy.damping
        var damping = dampings[uplink.name] ?? FlapDamping()
        let suppressedNow = damping.flapped(at: at, settings: settings)
        dampings[uplink.name] = damping
        guard suppressedNow else { return [event] }
        let penalty = Int(damping.penalty(at: at, settings: settings).rounded())
        let release = damping.releaseMilliseconds(settings: settings).map { ($0 - at + 999) / 1_000 } ?? 0
        return [event, .note(.suppressed(uplink.name, penalty: penalty, suppressLimit: settings.suppressLimit,
                                         releaseSeconds: release))]
    }
}
