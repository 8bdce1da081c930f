/// When an uplink is probed next: at once after a link event or on doubt, every
/// interval while stable, and with exponential back-off (suspect interval doubling up
/// to the normal interval) while suspect.
package struct ProbeSchedule: Sendable, Equatable {
    /// Monotonic time of the next round, or nil when none is planned.
    package private(set) var nextDueMilliseconds: Int?
    /// The back-off step currently in use while suspect.
    package private(set) var currentSuspectMilliseconds: Int

    package init(settings: ProbingSettings) {
        currentSuspectMilliseconds = settings.suspectIntervalMilliseconds
    }

    /// Probe as soon as possible (a link event that can change the answer, a doubt).
    package mutating func probeNow(at now: Int, settings: ProbingSettings) {
        nextDueMilliseconds = now
        currentSuspectMilliseconds = settings.suspectIntervalMilliseconds
    }

    /// No probing (the uplink is down, or gone).
    package mutating func stop() {
        nextDueMilliseconds = nil
    }

    /// Plans the next round after one finished.
    package mutating func roundFinished(at now: Int, suspect: Bool, online: Bool, settings: ProbingSettings) {
        if suspect {
            nextDueMilliseconds = now + currentSuspectMilliseconds
            currentSuspectMilliseconds = min(currentSuspectMilliseconds * 2, settings.recheckIntervalMilliseconds)
            return
        }
        currentSuspectMilliseconds = settings.suspectIntervalMilliseconds
        if online {
            nextDueMilliseconds = settings.probeWhenOnline ? now + settings.intervalMilliseconds : nil
        } else {
            nextDueMilliseconds = now + settings.recheckIntervalMilliseconds
        }
    }

    /// Nothing before `time` (a spent byte budget waits for its next window; answered
    /// traffic postpones a light round).
    package mutating func postpone(until time: Int) {
        nextDueMilliseconds = time
    }

    package func isDue(at now: Int) -> Bool {
        guard let due = nextDueMilliseconds else { return false }
        return due <= now
    }
}
