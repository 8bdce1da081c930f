/// One uplink's verdict over time, with hysteresis.
///
/// - Link events act at once: a link-level `down` (carrier loss, admin down, no usable
///   address or route) replaces the verdict immediately.
/// - The first probe round after start-up, after the link came back or after a
///   recovery step renewed the path decides at once.
/// - Leaving `online` takes `failuresToLeaveOnline` consecutive failed full rounds;
///   returning takes `successesToReturnOnline` consecutive validated rounds. Light and
///   verification rounds never come here: their failure only starts a full round. Between `captive` and
///   `limited` the latest round decides.
package struct VerdictMachine: Sendable, Equatable {
    package private(set) var assessment = Assessment(.unknown, reason: .starting)
    package private(set) var families: [AddressFamily: Assessment] = [:]
    package private(set) var since: Instant
    /// The verdict before the current one (`unknown` until the first change).
    package private(set) var previousVerdict: Verdict = .unknown
    package private(set) var consecutiveFailures = 0
    package private(set) var consecutiveSuccesses = 0
    /// True until a probe round has decided since the last link change.
    package private(set) var awaitingFirstRound = true

    package init(now: Instant) {
        since = now
    }

    package var verdict: Verdict { assessment.verdict }

    /// An uplink is suspect (probed fast) while a change is pending or undecided.
    package var isSuspect: Bool {
        awaitingFirstRound || consecutiveFailures > 0 || consecutiveSuccesses > 0
    }

    /// Applies the link-level judgement. Returns true when the verdict changed.
    package mutating func linkChanged(_ link: LinkEvaluator.Result, now: Instant) -> Bool {
        switch link {
        case .down(let reason):
            families = [:]
            consecutiveFailures = 0
            consecutiveSuccesses = 0
            awaitingFirstRound = true
            return adopt(Assessment(.down, reason: reason), now: now)
        case .probe:
            // The link is usable again (or changed while usable): the next round decides
            // without hysteresis.
            if verdict == .down || verdict == .unknown { awaitingFirstRound = true }
            return false
        }
    }

    /// The path under the uplink was built anew while its link stayed up (a recovery
    /// step connected its modem's bearer again): like a link that came back, the
    /// next round decides without hysteresis.
    package mutating func pathRenewed() {
        awaitingFirstRound = true
        consecutiveFailures = 0
        consecutiveSuccesses = 0
    }

    /// Applies a finished probe round. Returns true when the verdict changed.
    package mutating func roundFinished(_ round: Assessment, families roundFamilies: [AddressFamily: Assessment],
                                       settings: ProbingSettings, now: Instant) -> Bool {
        families = roundFamilies
        if awaitingFirstRound {
            awaitingFirstRound = false
            consecutiveFailures = 0
            consecutiveSuccesses = 0
            return adopt(round, now: now)
        }
        if round.verdict == verdict {
            consecutiveFailures = 0
            consecutiveSuccesses = 0
            // Same verdict, maybe a new reason or portal URL: keep `since`, refresh facts.
            assessment = round
            return false
        }
        if verdict == .online {
            consecutiveFailures += 1
            guard consecutiveFailures >= settings.failuresToLeaveOnline else { return false }
        } else if round.verdict == .online {
            consecutiveSuccesses += 1
            guard consecutiveSuccesses >= settings.successesToReturnOnline else { return false }
        }
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        return adopt(round, now: now)
    }

    private mutating func adopt(_ new: Assessment, now: Instant) -> Bool {
        let changed = new.verdict != assessment.verdict
        if changed {
            since = now
            previousVerdict = assessment.verdict
        }
        assessment = new
        return changed
    }
}
