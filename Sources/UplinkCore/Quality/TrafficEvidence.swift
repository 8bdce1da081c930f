/// The primary's own traffic as evidence about it, at no cost in probes: a stall (packets
/// leaving with nothing back) makes it suspect, traffic that is answered vouches for it
/// in place of a light round or two, and a stall alarm that a full round disproved
/// (one-way traffic) pauses further alarms, for longer each time.
struct TrafficEvidence: Sendable {
    /// Answered traffic postpones at most this many light rounds in a row, so a portal
    /// that appears on a busy primary is still found.
    static let maximumSkippedLightRounds = 2
    /// After an alarm that a full round disproved, alarms pause for this long, doubling
    /// up to the maximum (one-way traffic must not cost a round every second).
    static let falseAlarmPauseMilliseconds = 10_000...300_000

    var monitor = TrafficMonitor()
    /// When a sample last saw traffic that was answered.
    private(set) var lastAnsweredMilliseconds: Int?
    private var lastSkipMilliseconds: Int?
    private var skippedLightRounds = 0
    private var alarmPauseMilliseconds = TrafficEvidence.falseAlarmPauseMilliseconds.lowerBound
    private var alarmsPausedUntilMilliseconds = 0
    /// The lone-packet rule's own pause: its false alarms (a client's last packet with
    /// nothing due back, one-way datagrams) must not silence the stronger rules.
    private var lonePauseMilliseconds = TrafficEvidence.falseAlarmPauseMilliseconds.lowerBound
    private var lonePausedUntilMilliseconds = 0
    /// The rule whose alarm the open doubt (or the light check) is about.
    private var pendingRule: StallRule?
    /// A lone-packet alarm waits for the light round it asked for (a metered primary).
    var lightCheckPending = false
    /// Alarms raised by each rule since the agent started (counted whether a full round
    /// proved them right or not).
    private(set) var alarms: [StallRule: Int] = [:]

    /// A new primary: what the counters showed before says nothing of it now.
    mutating func restart() {
        monitor = TrafficMonitor()
        lastAnsweredMilliseconds = nil
    }

    mutating func answered(at now: Instant) {
        lastAnsweredMilliseconds = now.monotonicMilliseconds
    }

    /// Whether answered traffic since the last round stands in for a liveness round
    /// due now (no limit: a liveness round finds no portal).
    func vouchesForLiveness(lastRoundMilliseconds: Int?) -> Bool {
        guard let answered = lastAnsweredMilliseconds else { return false }
        return answered >= lastRoundMilliseconds ?? 0
    }

    /// Whether answered traffic since the last round (and the last skip) stands in for
    /// a light round due now.
    func vouchesForLightRound(lastRoundMilliseconds: Int?) -> Bool {
        guard let answered = lastAnsweredMilliseconds else { return false }
        return answered >= max(lastRoundMilliseconds ?? 0, lastSkipMilliseconds ?? 0)
            && skippedLightRounds < TrafficEvidence.maximumSkippedLightRounds
    }

    mutating func skippedLightRound(at now: Instant) {
        skippedLightRounds += 1
        lastSkipMilliseconds = now.monotonicMilliseconds
    }

    mutating func lightRoundStarted() {
        skippedLightRounds = 0
    }

    /// Whether an alarm of `rule` is acted on now: every rule waits out the pause after
    /// a disproved alarm of the strong rules; the lone-packet rule its own as well.
    func alarmsPaused(at now: Instant, rule: StallRule = .window) -> Bool {
        let at = now.monotonicMilliseconds
        return at < alarmsPausedUntilMilliseconds || (rule == .lonePacket && at < lonePausedUntilMilliseconds)
    }

    /// An alarm of `rule` is acted on (a confirming full round starts).
    mutating func alarmRaised(_ rule: StallRule) {
        pendingRule = rule
        alarms[rule, default: 0] += 1
    }

    /// A full round settled a stall alarm: a validated one proves it false (pause its
    /// rule's alarms, longer than last time), a failed one proves it right (no pause
    /// next time).
    mutating func alarmSettled(validated: Bool, at now: Instant) {
        let lone = pendingRule == .lonePacket
        pendingRule = nil
        let bounds = TrafficEvidence.falseAlarmPauseMilliseconds
        switch (lone, validated) {
        case (true, true):
            lonePausedUntilMilliseconds = now.monotonicMilliseconds + lonePauseMilliseconds
            lonePauseMilliseconds = min(lonePauseMilliseconds * 2, bounds.upperBound)
        case (true, false):
            lonePauseMilliseconds = bounds.lowerBound
        case (false, true):
            alarmsPausedUntilMilliseconds = now.monotonicMilliseconds + alarmPauseMilliseconds
            alarmPauseMilliseconds = min(alarmPauseMilliseconds * 2, bounds.upperBound)
        case (false, false):
            alarmPauseMilliseconds = bounds.lowerBound
        }
    }
}

/// Which rule of `TrafficMonitor` raised a stall alarm.
package enum StallRule: String, Sendable, Equatable, CaseIterable {
    /// Two packets or more unanswered for the configured `stall-window`.
    case window
    /// Four packets or more unanswered for several of the uplink's round trips.
    case quick
    /// One packet unanswered for several of the uplink's round trips (a quiet client).
    case lonePacket = "lone-packet"
}

/// Why the primary's traffic raised an alarm, as the log tells it.
package struct StallEvidence: Sendable, Equatable {
    /// Packets that left since anything came back.
    package var unansweredPackets: UInt64
    /// How long nothing has come back.
    package var silentMilliseconds: Int
    /// The window the stall had to last.
    package var windowMilliseconds: Int
    /// How long the first unanswered packet has waited.
    package var waitedMilliseconds: Int
    package var rule: StallRule

    package init(unansweredPackets: UInt64, silentMilliseconds: Int, windowMilliseconds: Int,
                 waitedMilliseconds: Int = 0, rule: StallRule = .window) {
        self.unansweredPackets = unansweredPackets
        self.silentMilliseconds = silentMilliseconds
        self.windowMilliseconds = windowMilliseconds
        self.waitedMilliseconds = waitedMilliseconds
        self.rule = rule
    }
}
