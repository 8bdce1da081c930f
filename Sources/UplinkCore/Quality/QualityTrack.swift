/// An uplink's link quality as the agent tracks it: round-trip time and loss per family,
/// learned only from rounds the uplink came through online (an outage is not the
/// link's quality), and whether it is degraded, with the time that last changed.
struct QualityTrack: Sendable {
    private(set) var perFamily: [AddressFamily: QualityEstimator] = [:]
    /// The same attempts with when they were counted, the newest `windowAttempts` per
    /// family: what the last stretch alone says (see `degradationLasted`).
    private var recent: [AddressFamily: [TimedSample]] = [:]
    /// Probes of rounds that raised a doubt not settled yet: they count once the uplink
    /// is confirmed online, and are dropped if it leaves.
    private var pending: [ProbeReport] = []
    /// The probes' figures are past a mark (loss, round-trip time).
    private var probesDegraded = false
    /// The modem's signal is past its mark (RSRP).
    private(set) var signalDegraded = false
    var degraded: Bool { probesDegraded || signalDegraded }
    /// When `degraded` last changed (or the uplink came online).
    private(set) var sinceMilliseconds = 0

    /// The figures of the best online family (IPv4 first), else of any family.
    func figures(onlineFamilies: (AddressFamily) -> Bool) -> QualityFigures? {
        reportedFamily(onlineFamilies: onlineFamilies).flatMap { perFamily[$0]?.figures }
    }

    /// The family whose figures are reported (and judged): the best online one, else any.
    private func reportedFamily(onlineFamilies: (AddressFamily) -> Bool) -> AddressFamily? {
        let families = AddressFamily.allCases.filter { perFamily[$0] != nil }
        return families.first(where: onlineFamilies) ?? families.first
    }

    /// A round's probes: counted now when the uplink is settled online, held while a
    /// doubt is open, dropped when it is not online.
    mutating func roundFinished(_ probes: [ProbeReport], online: Bool, settled: Bool, thresholds: QualityThresholds,
                                onlineFamilies: (AddressFamily) -> Bool, at now: Instant) {
        guard online else {
            pending = []
            return
        }
        guard settled else {
            pending = Array((pending + probes).suffix(QualityEstimator.windowAttempts))
            return
        }
        for probe in pending + probes {
            perFamily[probe.family, default: QualityEstimator()].add(probe)
            guard let sample = HandshakeSample(probe) else { continue }
            var samples = recent[probe.family, default: []]
            samples.append(TimedSample(countedMilliseconds: now.monotonicMilliseconds, sample: sample))
            recent[probe.family] = Array(samples.suffix(QualityEstimator.windowAttempts))
        }
        pending = []
        guard let figures = figures(onlineFamilies: onlineFamilies) else { return }
        let wasDegraded = degraded
        probesDegraded = thresholds.isDegraded(figures, wasDegraded: probesDegraded)
        if degraded != wasDegraded { sinceMilliseconds = now.monotonicMilliseconds }
    }

    /// Whether the uplink has been degraded for `forMilliseconds` and still is: its
    /// modem's signal past the mark, or the probes counted in that last stretch, on
    /// their own, at or above a mark. The loss figure rests on the last
    /// `QualityEstimator.windowAttempts` attempts, minutes of light rounds, so a burst
    /// that ended long ago keeps the uplink degraded; it must not hand the primary
    /// over then. No attempts in the stretch (probing paused) show nothing either.
    /// The stretch is judged in the family whose figures made the uplink degraded.
    func degradationLasted(forMilliseconds: Int, thresholds: QualityThresholds,
                           onlineFamilies: (AddressFamily) -> Bool, at now: Instant) -> Bool {
        let from = now.monotonicMilliseconds - forMilliseconds
        guard degraded, sinceMilliseconds <= from else { return false }
        if signalDegraded { return true }
        guard let family = reportedFamily(onlineFamilies: onlineFamilies) else { return false }
        var stretch = QualityEstimator()
        for timed in recent[family, default: []] where timed.countedMilliseconds > from { stretch.add(timed.sample) }
        return thresholds.isDegraded(stretch.figures(minimumAttempts: 1), wasDegraded: false)
    }

    /// The modem's latest RSRP (nil: none reported, or no modem).
    mutating func signalChanged(rsrpDBm: Double?, thresholds: QualityThresholds, at now: Instant) {
        let wasDegraded = degraded
        signalDegraded = thresholds.isSignalDegraded(rsrpDBm: rsrpDBm, wasDegraded: signalDegraded)
        if degraded != wasDegraded { sinceMilliseconds = now.monotonicMilliseconds }
    }

    /// The uplink came online: health must last from here, but a degradation that
    /// outlived the outage keeps its own start.
    mutating func cameOnline(at now: Instant) {
        if !degraded { sinceMilliseconds = now.monotonicMilliseconds }
    }

    /// The link went down: nothing measured before says anything of it when it is back.
    mutating func linkWentDown() {
        perFamily = [:]
        recent = [:]
        probesDegraded = false
        signalDegraded = false
    }

    /// A doubt's held probes saw a link that changed since: drop them.
    mutating func dropPending() {
        pending = []
    }
}

/// One handshake sample with the time it was counted.
struct TimedSample: Sendable {
    var countedMilliseconds: Int
    var sample: HandshakeSample
}
