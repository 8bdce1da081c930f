/// When an uplink is probed next: at once after a link event, every interval while
/// stable, and with exponential back-off (suspect interval doubling up to the normal
/// interval) while suspect.
public struct ProbeSchedule: Sendable, Equatable {
    /// Monotonic time of the next round, or nil when none is planned.
    public private(set) var nextDueMilliseconds: Int?
    /// The back-off step currently in use while suspect.
    public private(set) var currentSuspectMilliseconds: Int

    public init(policy: AgentPolicy) {
        currentSuspectMilliseconds = policy.suspectIntervalMilliseconds
    }

    /// Probe as soon as possible (link event that can change the answer).
    public mutating func probeNow(at now: Int, policy: AgentPolicy) {
        nextDueMilliseconds = now
        currentSuspectMilliseconds = policy.suspectIntervalMilliseconds
    }

    /// No probing (the uplink is down, or gone).
    public mutating func stop() {
        nextDueMilliseconds = nil
    }

    /// Plans the next round after one finished.
    public mutating func roundFinished(at now: Int, suspect: Bool, online: Bool, policy: AgentPolicy) {
        if suspect {
            nextDueMilliseconds = now + currentSuspectMilliseconds
            currentSuspectMilliseconds = min(currentSuspectMilliseconds * 2, policy.intervalMilliseconds)
            return
        }
        currentSuspectMilliseconds = policy.suspectIntervalMilliseconds
        nextDueMilliseconds = (online && !policy.probeWhenOnline) ? nil : now + policy.intervalMilliseconds
    }

    /// Nothing before `time` (a spent byte budget waits for its next window).
    public mutating func postpone(until time: Int) {
        nextDueMilliseconds = time
    }

    public func isDue(at now: Int) -> Bool {
        guard let due = nextDueMilliseconds else { return false }
        return due <= now
    }
}
