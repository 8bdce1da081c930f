/// What one probe's TCP handshake tells about the path, at no extra cost: whether
/// its first SYN was answered, and if so how long that took. Linux retransmits a SYN
/// after one second, and a server whose SYN-ACK got no answer retransmits it after one
/// second too, so a handshake that completed within a second is one packet out and
/// one back, both delivered; one that did not had its first SYN or the SYN-ACK lost.
/// Later SYNs are left out: by then both ends retransmit, and the attempts are no
/// longer one packet each way.
package struct HandshakeSample: Sendable, Equatable {
    /// First SYNs that had their full second (0 or 1).
    package var attempts: Int
    /// 1 when the first SYN was answered within its second, else 0.
    package var answered: Int
    /// Set when the first SYN was answered (Karn's rule: a handshake that needed a
    /// retransmission cannot tell which SYN its answer belongs to).
    package var roundTripMilliseconds: Int?

    /// Linux's initial SYN retransmission time (and a server's SYN-ACK's).
    package static let firstRetransmissionMilliseconds = 1_000

    package init(attempts: Int, answered: Int, roundTripMilliseconds: Int? = nil) {
        self.attempts = attempts
        self.answered = answered
        self.roundTripMilliseconds = roundTripMilliseconds
    }

    /// The sample of one probe, or nil when it says nothing about loss: no connection
    /// was tried (DNS failed, a hijacked name), the attempt was answered with a refusal
    /// or an ICMP error, or the probe gave up before its first SYN had its wait.
    ///
    /// The wait is the first second, or the probe's whole limit when that is shorter
    /// (a round confirming a doubt): both outcomes are then judged by the same
    /// deadline. Counting the short rounds' answers and not their silences would
    /// report a lossy path as clean, since only the SYNs that got through would count.
    package init?(_ probe: ProbeReport) {
        let wait = min(HandshakeSample.firstRetransmissionMilliseconds,
                       probe.exchangeLimitMilliseconds ?? HandshakeSample.firstRetransmissionMilliseconds)
        if let connect = probe.connectMilliseconds {
            self.init(attempts: 1, answered: connect < wait ? 1 : 0,
                      roundTripMilliseconds: connect < wait ? connect : nil)
            return
        }
        guard probe.judgement == .broken(reason: .timeout), probe.exchangeMilliseconds >= wait else { return nil }
        self.init(attempts: 1, answered: 0)
    }
}

/// Round-trip time, its variation and loss of one uplink over one family, as reported.
package struct QualityFigures: Sendable, Equatable {
    /// Smoothed TCP handshake time; nil before the first clean handshake.
    package var roundTripMilliseconds: Int?
    /// Its mean deviation (jitter).
    package var roundTripVariationMilliseconds: Int?
    /// Estimated share of packets lost in each direction; nil until enough attempts.
    package var lossPercent: Int?
    /// Handshake attempts the loss figure rests on.
    package var attempts: Int

    package init(roundTripMilliseconds: Int? = nil, roundTripVariationMilliseconds: Int? = nil,
                lossPercent: Int? = nil, attempts: Int = 0) {
        self.roundTripMilliseconds = roundTripMilliseconds
        self.roundTripVariationMilliseconds = roundTripVariationMilliseconds
        self.lossPercent = lossPercent
        self.attempts = attempts
    }

    package var json: JSONValue {
        .object([
            ("rtt_ms", roundTripMilliseconds.map(JSONValue.int) ?? .null),
            ("rtt_variation_ms", roundTripVariationMilliseconds.map(JSONValue.int) ?? .null),
            ("loss_pct", lossPercent.map(JSONValue.int) ?? .null),
            ("attempts", .int(attempts)),
        ])
    }

    /// The figures of one round's probes alone (what `check` reports): its loss figure
    /// rests on a handful of attempts, so `attempts` goes with it.
    package static func of(_ probes: [ProbeReport]) -> QualityFigures {
        var estimator = QualityEstimator()
        for probe in probes { estimator.add(probe) }
        return estimator.figures(minimumAttempts: 1)
    }
}

/// Learns one uplink's quality over one family from the handshakes of its probes: the
/// round-trip time smoothed as TCP does (RFC 6298), and loss over a sliding window of
/// the last `windowAttempts` first SYNs. A first SYN is a packet out and one back, so
/// it goes unanswered with probability 1 - (1 - p)^2 when each direction loses a
/// share p; the figure reported is p, the loss a packet meets, assuming the same both
/// ways (30 % random drop each way leaves 51 % unanswered and is reported as 30 %).
package struct QualityEstimator: Sendable, Equatable {
    /// Window size: at the unmetered defaults (a light round every 10 s, full rounds
    /// on doubt) five to ten minutes of probing.
    package static let windowAttempts = 64
    /// No loss figure on fewer attempts than this (one lost SYN of four is not 25 %).
    package static let minimumAttempts = 16

    private var window: [HandshakeSample] = []
    private var roundTrip = RoundTripEstimator()

    package init() {}

    package mutating func add(_ probe: ProbeReport) {
        guard let sample = HandshakeSample(probe) else { return }
        add(sample)
    }

    package mutating func add(_ sample: HandshakeSample) {
        if let milliseconds = sample.roundTripMilliseconds { roundTrip.add(sampleMilliseconds: milliseconds) }
        window.append(sample)
        var total = window.reduce(0) { $0 + $1.attempts }
        while let first = window.first, window.count > 1, total - first.attempts >= QualityEstimator.windowAttempts {
            total -= first.attempts
            window.removeFirst()
        }
    }

    package var figures: QualityFigures { figures(minimumAttempts: QualityEstimator.minimumAttempts) }

    package func figures(minimumAttempts: Int) -> QualityFigures {
        let attempts = window.reduce(0) { $0 + $1.attempts }
        let answered = window.reduce(0) { $0 + $1.answered }
        var figures = QualityFigures(attempts: attempts)
        if let smoothed = roundTrip.smoothedMilliseconds {
            figures.roundTripMilliseconds = Int(smoothed.rounded())
            figures.roundTripVariationMilliseconds = Int(roundTrip.variationMilliseconds.rounded())
        }
        if attempts >= max(1, minimumAttempts) {
            let failedShare = 1 - Double(answered) / Double(attempts)
            let perPacket = 1 - (1 - failedShare).squareRoot()
            figures.lossPercent = Int((100 * perPacket).rounded())
        }
        return figures
    }
}

/// When an uplink counts as degraded: loss or round-trip time at or above the marks
/// (`degraded-loss`, `degraded-rtt`), and healthy again only once both are below half
/// of them, so a link near a mark does not toggle.
package struct QualityThresholds: Sendable, Equatable {
    /// Per-packet loss. 10 % each way fails about 19 % of round trips: dpinger's alarm
    /// at 20 % loss, measured as pings, where it stops using a gateway.
    package var lossPercent = 10
    /// dpinger's latency alarm (500 ms); mwan3's quality check uses the same order.
    package var roundTripMilliseconds = 500
    /// A modem's LTE/5G RSRP at or below this is degraded (about where throughput
    /// collapses and calls drop); healthy again `rsrpRecoveryDB` above it. Nil: off.
    package var rsrpDBm: Int? = -115
    package static let rsrpRecoveryDB = 5.0

    package init() {}

    /// Whether figures mean degraded, given whether the uplink was degraded before.
    package func isDegraded(_ figures: QualityFigures, wasDegraded: Bool) -> Bool {
        let loss = figures.lossPercent
        let roundTrip = figures.roundTripMilliseconds
        if wasDegraded {
            let lossClear = (loss ?? 0) * 2 < lossPercent
            let roundTripClear = (roundTrip ?? 0) * 2 < roundTripMilliseconds
            return !(lossClear && roundTripClear)
        }
        return (loss.map { $0 >= lossPercent } ?? false) || (roundTrip.map { $0 >= roundTripMilliseconds } ?? false)
    }

    /// Whether a modem's RSRP means degraded, given whether the signal was degraded.
    package func isSignalDegraded(rsrpDBm rsrp: Double?, wasDegraded: Bool) -> Bool {
        guard let mark = rsrpDBm.map(Double.init), let rsrp else { return false }
        return wasDegraded ? rsrp < mark + QualityThresholds.rsrpRecoveryDB : rsrp <= mark
    }
}
