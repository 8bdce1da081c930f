/// An uplink's link quality as the agent tracks it: round-trip time and loss per family,
/// learned only from rounds the uplink came through online (an outage is not the
/// link's quality), and whether it is degraded, with the time that last changed.
struct QualityTrack: Sendable {
    private(set) var perFamily: [AddressFamily: QualityEstimator] = [:]
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
        let families = AddressFamily.allCases.filter { perFamily[$0] != nil }
        let online = families.filter(onlineFamilies)
        return (online.first ?? families.first).flatMap { perFamily[$0]?.figures }
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
        for probe in pending + probes { perFamily[probe.family, default: QualityEstimator()].add(probe) }
        pending = []
        guard let figures = figures(onlineFamilies: onlineFamilies) else { return }
        let wasDegraded = degraded
        probesDegraded = thresholds.isDegraded(figures, wasDegraded: probesDegraded)
        if degraded != wasDegraded { sinceMilliseconds = now.monotonicMilliseconds }
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
        probesDegraded = false
        signalDegraded = false
    }

    /// A doubt's held probes saw a link that changed since: drop them.
    mutating func dropPending() {
        pending = []
    }
}
