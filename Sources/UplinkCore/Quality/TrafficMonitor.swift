/// Passive stall detection on the primary uplink, from its packet counters: packets
/// keep leaving while nothing comes back for `window` means the path died with the
/// carrier still up (the upstream router lost its own internet, a modem's data
/// session hung). It costs no probe; the agent then confirms with a full round.
///
/// A quiet client (one request at a time, every few seconds) sends too few packets for
/// either rule to fire fast: one packet that has waited many of the uplink's round
/// trips with nothing back is reported apart (`.lonePacket`), weaker evidence that the
/// agent rate-limits on its own.
///
/// False alarms: one-way traffic (a UDP stream or syslog sent out with nothing coming
/// back) looks the same; the agent damps those with a growing pause after every alarm
/// that a full round disproved. Missed stalls: broadcast or ARP noise received on the
/// uplink counts as traffic coming back and can delay detection; the light rounds still
/// find the stall then.
package struct TrafficMonitor: Sendable {
    /// What one sample says.
    package enum Observation: Sendable, Equatable {
        /// No packet left since the last sample.
        case quiet
        /// Packets left; `answered` when packets also came back.
        case flowing(answered: Bool)
        /// Packets kept leaving with nothing back for the whole window (once per stall).
        case stalled
        /// A packet left and nothing came back for the lone-packet window since it did
        /// (once per silence, and only before `.stalled`).
        case lonePacket
    }

    /// Sample period while packets leave, and while the uplink is quiet.
    package static let busySampleMilliseconds = 100
    package static let idleSampleMilliseconds = 1_000
    /// Packets that must leave unanswered before a stall counts (one lone packet can
    /// be a last ACK).
    package static let unansweredPackets: UInt64 = 2
    /// Packets that must come back in one sample for traffic to count as answered.
    /// Neighbour upkeep after each probe (an ARP or NDP request and reply each way:
    /// two packets in, two out) must not vouch for the uplink and postpone its next
    /// light round; a real exchange (SYN-ACK, data, FIN) brings three or more.
    package static let answeringPackets: UInt64 = 3

    private var last: (rx: UInt64, tx: UInt64)?
    private var lastReceiveMilliseconds = 0
    private var lastTransmitMilliseconds = Int.min / 2
    private var transmittedAtLastReceive: UInt64 = 0
    private var alarmed = false
    /// When the first packet still unanswered was seen to leave; nil while nothing waits.
    private var waitingSinceMilliseconds: Int?
    private var loneReported = false
    /// The rule of the last `.stalled` or `.lonePacket`.
    package private(set) var lastAlarmRule = StallRule.window

    package init() {}

    /// When to sample next: often while packets leave or wait for an answer (a stall
    /// is measured to the sample), rarely while quiet.
    package var nextSampleMilliseconds: Int {
        // The first sample only sets the baseline: take it soon.
        guard last != nil else { return TrafficMonitor.busySampleMilliseconds }
        let waiting = (last?.tx ?? 0) > transmittedAtLastReceive && !alarmed
            && lastSampleMilliseconds - lastReceiveMilliseconds <= windowMilliseconds
        let recent = lastTransmitMilliseconds >= lastSampleMilliseconds - 1_000
        return waiting || recent ? TrafficMonitor.busySampleMilliseconds : TrafficMonitor.idleSampleMilliseconds
    }

    private var lastSampleMilliseconds = 0
    private var windowMilliseconds = 0

    /// When the counters were last taken (sampled or excused); nil before the first.
    package var lastSampledMilliseconds: Int? { last == nil ? nil : lastSampleMilliseconds }

    /// What the last `.stalled` or `.lonePacket` saw: packets left since anything came
    /// back, for how long nothing came back, and for how long the first of them waited.
    package func stallEvidence(at now: Int, windowMilliseconds: Int) -> StallEvidence {
        StallEvidence(unansweredPackets: (last?.tx ?? transmittedAtLastReceive) - transmittedAtLastReceive,
                      silentMilliseconds: now - lastReceiveMilliseconds, windowMilliseconds: windowMilliseconds,
                      waitedMilliseconds: waitingSinceMilliseconds.map { now - $0 } ?? 0, rule: lastAlarmRule)
    }

    /// The agent did not act on the last `.stalled` (alarms paused, or a round already
    /// pending): report it again while the stall lasts.
    package mutating func rearm() {
        alarmed = false
    }

    /// The counters moved for a reason known to be no stall (the agent's own probes):
    /// whatever left is taken as answered.
    package mutating func excuse(receivedPackets rx: UInt64, transmittedPackets tx: UInt64, at now: Int) {
        if let previous = last, tx > previous.tx { lastTransmitMilliseconds = now }
        last = (rx, tx)
        lastSampleMilliseconds = now
        lastReceiveMilliseconds = now
        transmittedAtLastReceive = tx
        alarmed = false
        waitingSinceMilliseconds = nil
        loneReported = false
    }

    /// A shorter stall rule for busy links: this many packets left unanswered for this
    /// long (several of the uplink's own round trips) is a stall too.
    package struct QuickStall: Sendable, Equatable {
        package var windowMilliseconds: Int
        package var unansweredPackets: UInt64

        package init(windowMilliseconds: Int, unansweredPackets: UInt64) {
            self.windowMilliseconds = windowMilliseconds
            self.unansweredPackets = unansweredPackets
        }

        /// At least this many packets unanswered for several round trips of the
        /// uplink's own: 8 smoothed round trips or 3 retransmission timeouts, never
        /// under the floor (the sampling runs every 100 ms while packets leave).
        package static let packets: UInt64 = 4
        package static let floorMilliseconds = 300
        package static let roundTrips = 8

        /// The quick rule for an uplink of these figures, when it is shorter than the
        /// configured window; nil before its round trips are known.
        package static func of(_ figures: QualityFigures?, windowMilliseconds: Int) -> QuickStall? {
            guard let roundTrip = figures?.roundTripMilliseconds else { return nil }
            let variation = figures?.roundTripVariationMilliseconds ?? roundTrip / 2
            let window = max(floorMilliseconds, roundTrips * roundTrip, 3 * (roundTrip + 4 * variation))
            guard window < windowMilliseconds else { return nil }
            return QuickStall(windowMilliseconds: window, unansweredPackets: packets)
        }
    }

    /// The lone-packet rule: one packet unanswered for as long as the quick rule's
    /// window (several of the uplink's own round trips, never under its floor).
    package struct LonePacket: Sendable, Equatable {
        package var windowMilliseconds: Int

        package init(windowMilliseconds: Int) {
            self.windowMilliseconds = windowMilliseconds
        }

        /// Nil before the uplink's round trips are known, or when not shorter than the
        /// configured window (the slow rule is then as fast).
        package static func of(_ figures: QualityFigures?, windowMilliseconds: Int) -> LonePacket? {
            QuickStall.of(figures, windowMilliseconds: windowMilliseconds).map { LonePacket(windowMilliseconds: $0.windowMilliseconds) }
        }
    }

    /// Takes the interface's received and transmitted packet counters.
    package mutating func sample(receivedPackets rx: UInt64, transmittedPackets tx: UInt64, at now: Int,
                                windowMilliseconds: Int, quick: QuickStall? = nil, lone: LonePacket? = nil) -> Observation {
        lastSampleMilliseconds = now
        self.windowMilliseconds = windowMilliseconds
        guard let previous = last, rx >= previous.rx, tx >= previous.tx else {
            // First sample, or the counters went back (the device was re-created).
            last = (rx, tx)
            lastReceiveMilliseconds = now
            transmittedAtLastReceive = tx
            alarmed = false
            waitingSinceMilliseconds = nil
            loneReported = false
            return .quiet
        }
        last = (rx, tx)
        let received = rx > previous.rx
        // Traffic that vouches for the uplink must look like answers: at least three
        // packets back, and one for every four sent. Neighbour upkeep, the odd ARP
        // reply, or a router's ICMP errors trickling back must not postpone probes.
        let answered = rx - previous.rx >= TrafficMonitor.answeringPackets
            && (rx - previous.rx) * 4 >= (tx - previous.tx)
        let sent = tx > previous.tx
        if sent { lastTransmitMilliseconds = now }
        if received {
            lastReceiveMilliseconds = now
            transmittedAtLastReceive = tx
            alarmed = false
            waitingSinceMilliseconds = nil
            loneReported = false
        }
        let unanswered = tx - transmittedAtLastReceive
        // Taken when the sample sees it, never earlier: the wait is never overstated.
        if unanswered > 0 && waitingSinceMilliseconds == nil { waitingSinceMilliseconds = now }
        let silence = now - lastReceiveMilliseconds
        let slow = unanswered >= TrafficMonitor.unansweredPackets && silence >= windowMilliseconds
        let fast = quick.map { unanswered >= $0.unansweredPackets && silence >= $0.windowMilliseconds } ?? false
        if !alarmed && (slow || fast) {
            alarmed = true
            lastAlarmRule = slow ? .window : .quick
            return .stalled
        }
        // Measured from the packet, not from the last answer: after a quiet minute, a
        // new request must still wait its own round trips.
        if let lone, !alarmed, !loneReported, let waiting = waitingSinceMilliseconds,
           now - waiting >= lone.windowMilliseconds {
            loneReported = true
            lastAlarmRule = .lonePacket
            return .lonePacket
        }
        return sent ? .flowing(answered: answered) : .quiet
    }
}
