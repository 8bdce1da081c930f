/// How long a healthy exchange takes on one uplink, learned from its validated probes
/// the way TCP learns its retransmission timeout (RFC 6298: a smoothed time and its
/// variation, gains 1/8 and 1/4). Rounds on an online uplink use twice the resulting
/// RTO as their time limit, between a floor and the configured ceiling: a blackholed
/// uplink is confirmed in about a second, while a satellite or loaded LTE link keeps
/// the time it needs.
package struct RoundTripEstimator: Sendable, Equatable {
    /// Smoothed duration, milliseconds; nil before the first sample.
    package private(set) var smoothedMilliseconds: Double?
    /// Mean deviation, milliseconds.
    package private(set) var variationMilliseconds: Double = 0

    package init() {}

    package mutating func add(sampleMilliseconds sample: Int) {
        let sample = Double(max(0, sample))
        guard let smoothed = smoothedMilliseconds else {
            smoothedMilliseconds = sample
            variationMilliseconds = sample / 2
            return
        }
        variationMilliseconds = 0.75 * variationMilliseconds + 0.25 * abs(smoothed - sample)
        smoothedMilliseconds = 0.875 * smoothed + 0.125 * sample
    }

    /// The time limit to use: the ceiling until something was learned.
    package func timeout(floorMilliseconds: Int, ceilingMilliseconds: Int) -> Int {
        guard let smoothed = smoothedMilliseconds else { return ceilingMilliseconds }
        let retransmission = smoothed + 4 * variationMilliseconds
        let limit = Int((2 * retransmission).rounded(.up))
        return min(ceilingMilliseconds, max(floorMilliseconds, limit))
    }

    /// Forgets what was learned (the link changed under it).
    package mutating func reset() {
        self = RoundTripEstimator()
    }
}
