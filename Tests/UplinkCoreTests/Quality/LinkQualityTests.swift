import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Link quality: handshakes, loss and round-trip time")
struct LinkQualityTests {
    /// A probe that completed its handshake after `connect` ms.
    private func connected(after connect: Int, judgement: ProbeClass = .valid) -> ProbeReport {
        var probe = ProbeReport(name: "p", url: "http://p.example/", family: .ipv4, judgement: judgement, status: 204,
                                elapsedMilliseconds: connect + 20, bytes: 900)
        probe.connected = true
        probe.connectMilliseconds = connect
        return probe
    }

    /// A probe that never connected and failed for `reason` after `elapsed` ms.
    private func unconnected(_ reason: Reason, after elapsed: Int, dns: Int? = nil) -> ProbeReport {
        ProbeReport(name: "p", url: "http://p.example/", family: .ipv4, judgement: .broken(reason: reason), status: nil,
                    elapsedMilliseconds: elapsed, bytes: 300, dnsMilliseconds: dns)
    }

    /// Attempt `i` of a run fails when the integer share 51·i/100 steps up there: 51
    /// failures in every 100 attempts, spread as evenly as they can be.
    private func attemptFails(_ i: Int) -> Bool {
        (i + 1) * 51 / 100 != i * 51 / 100
    }

    // MARK: HandshakeSample

    @Test func aHandshakeAnsweredAtOnceIsOneAttemptWithItsRoundTrip() {
        #expect(HandshakeSample(connected(after: 40)) == HandshakeSample(attempts: 1, answered: 1, roundTripMilliseconds: 40))
    }

    @Test func aHandshakeThatNeededARetransmissionIsAnUnansweredFirstSYNWithoutRoundTrip() {
        // Karn's rule: the answer may belong to either SYN; and the first went unanswered.
        #expect(HandshakeSample(connected(after: 1_040)) == HandshakeSample(attempts: 1, answered: 0, roundTripMilliseconds: nil))
        #expect(HandshakeSample(connected(after: 999)) == HandshakeSample(attempts: 1, answered: 1, roundTripMilliseconds: 999))
    }

    @Test func laterSYNsAreLeftOut() {
        // By then both ends retransmit: later attempts are not one packet each way.
        #expect(HandshakeSample(connected(after: 3_050)) == HandshakeSample(attempts: 1, answered: 0))
        #expect(HandshakeSample(connected(after: 7_100)) == HandshakeSample(attempts: 1, answered: 0))
    }

    @Test func aConnectedProbeCountsAsAnsweredWhateverItsJudgement() {
        #expect(HandshakeSample(connected(after: 60, judgement: .broken(reason: .timeout)))
                    == HandshakeSample(attempts: 1, answered: 1, roundTripMilliseconds: 60))
    }

    @Test func aTimeoutWithoutConnectionIsOneUnansweredFirstSYN() {
        #expect(HandshakeSample(unconnected(.timeout, after: 5_000)) == HandshakeSample(attempts: 1, answered: 0))
        #expect(HandshakeSample(unconnected(.timeout, after: 1_000)) == HandshakeSample(attempts: 1, answered: 0))
        #expect(HandshakeSample(unconnected(.timeout, after: 1_999)) == HandshakeSample(attempts: 1, answered: 0))
    }

    @Test func theLookupIsNotPartOfTheHandshakeWait() {
        // 2 500 ms in all, 600 of them resolving: 1 900 ms of handshake, one SYN with its second.
        #expect(HandshakeSample(unconnected(.timeout, after: 2_500, dns: 600)) == HandshakeSample(attempts: 1, answered: 0))
    }

    @Test func aTimeoutBeforeTheFirstSYNHadASecondSaysNothing() {
        #expect(HandshakeSample(unconnected(.timeout, after: 900)) == nil)
    }

    @Test(arguments: [Reason.refused, .dnsFailed, .unreachable, .reset])
    func aProbeThatFailedWithoutTimingOutSaysNothingAboutLoss(reason: Reason) {
        #expect(HandshakeSample(unconnected(reason, after: 5_000)) == nil)
    }

    // MARK: QualityEstimator

    @Test func halfTheAttemptsFailingIsReportedAsThirtyPercentEachWay() {
        var estimator = QualityEstimator()
        for i in 0..<500 {
            estimator.add(HandshakeSample(attempts: 1, answered: attemptFails(i) ? 0 : 1))
        }
        let figures = estimator.figures
        #expect(figures.attempts == QualityEstimator.windowAttempts)
        #expect(figures.lossPercent.map { (28...32).contains($0) } == true, "\(figures)")
    }

    @Test func aShortRoundJudgesItsFirstSYNByItsOwnLimit() {
        // A round confirming a doubt may allow 250 ms: an answer within it counts, and
        // so does its silence; a probe that gave up earlier (its DNS took the time) not.
        var answered = connected(after: 40)
        answered.exchangeLimitMilliseconds = 250
        #expect(HandshakeSample(answered) == HandshakeSample(attempts: 1, answered: 1, roundTripMilliseconds: 40))
        var silent = unconnected(.timeout, after: 252)
        silent.exchangeLimitMilliseconds = 250
        #expect(HandshakeSample(silent) == HandshakeSample(attempts: 1, answered: 0))
        var early = unconnected(.timeout, after: 240, dns: 100)
        early.exchangeLimitMilliseconds = 250
        #expect(HandshakeSample(early) == nil)
    }

    @Test func lossFromShortRoundsIsNotBiasedTowardsTheAnswered() {
        // Every other round is a 250 ms confirmation: its lost first SYNs count as
        // lost, or a 30 % path would read as far cleaner (only the answers counted).
        var estimator = QualityEstimator()
        for i in 0..<1_000 {
            let limit = i % 2 == 0 ? 250 : 1_000
            var probe = attemptFails(i) ? unconnected(.timeout, after: limit + 2) : connected(after: 40)
            probe.exchangeLimitMilliseconds = limit
            estimator.add(probe)
        }
        let figures = estimator.figures
        #expect(figures.lossPercent.map { (28...32).contains($0) } == true, "\(figures)")
    }

    @Test func lossFromWholeHandshakesOfRealProbes() {
        // The same 51 % of first SYNs unanswered; those handshakes complete later, after
        // retransmissions, or time out.
        var estimator = QualityEstimator()
        for i in 0..<1_000 {
            if attemptFails(i) {
                estimator.add(i % 3 == 0 ? unconnected(.timeout, after: 5_000) : connected(after: 1_040 + (i % 2) * 2_000))
            } else {
                estimator.add(connected(after: 40))
            }
        }
        let figures = estimator.figures
        #expect(figures.attempts >= QualityEstimator.windowAttempts)
        #expect(figures.lossPercent.map { (28...32).contains($0) } == true, "\(figures)")
        // Only handshakes answered at the first SYN were timed.
        #expect(figures.roundTripMilliseconds == 40)
    }

    @Test func noLossFigureOnFewerThanSixteenAttempts() {
        var estimator = QualityEstimator()
        for _ in 0..<15 { estimator.add(HandshakeSample(attempts: 1, answered: 0)) }
        #expect(estimator.figures.attempts == 15)
        #expect(estimator.figures.lossPercent == nil)
        estimator.add(HandshakeSample(attempts: 1, answered: 0))
        #expect(estimator.figures.lossPercent == 100)
    }

    @Test func oldLossesLeaveTheWindow() {
        var estimator = QualityEstimator()
        for _ in 0..<64 { estimator.add(HandshakeSample(attempts: 1, answered: 0)) }
        #expect(estimator.figures.lossPercent == 100)
        for _ in 0..<63 { estimator.add(HandshakeSample(attempts: 1, answered: 1, roundTripMilliseconds: 30)) }
        // One unanswered attempt of 64 is still in the window.
        #expect(estimator.figures.lossPercent == 1)
        estimator.add(HandshakeSample(attempts: 1, answered: 1, roundTripMilliseconds: 30))
        #expect(estimator.figures.lossPercent == 0)
        #expect(estimator.figures.attempts == 64)
    }

    @Test func theRoundTripIsSmoothedAsTCPDoes() {
        var estimator = QualityEstimator()
        estimator.add(connected(after: 40))
        #expect(estimator.figures.roundTripMilliseconds == 40)
        #expect(estimator.figures.roundTripVariationMilliseconds == 20)
        estimator.add(connected(after: 80))
        // RFC 6298: 7/8 of 40 and 1/8 of 80; variation 3/4 of 20 and 1/4 of 40.
        #expect(estimator.figures.roundTripMilliseconds == 45)
        #expect(estimator.figures.roundTripVariationMilliseconds == 25)
        estimator.add(connected(after: 2_500))
        #expect(estimator.figures.roundTripMilliseconds == 45)
    }

    @Test func oneRoundsFiguresRestOnItsOwnAttempts() {
        let figures = QualityFigures.of([connected(after: 20), unconnected(.timeout, after: 5_000)])
        #expect(figures.attempts == 2)
        // One of two first SYNs unanswered: 1 - sqrt(1/2) each way.
        #expect(figures.lossPercent == 29)
        #expect(figures.roundTripMilliseconds == 20)
    }

    // MARK: QualityThresholds

    @Test func degradedAtOrAboveEitherMark() {
        let thresholds = QualityThresholds()
        #expect(!thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 499, lossPercent: 9), wasDegraded: false))
        #expect(thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 20, lossPercent: 10), wasDegraded: false))
        #expect(thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 500, lossPercent: 0), wasDegraded: false))
    }

    @Test func onceDegradedOnlyHalfTheMarksOnBothCountsClearIt() {
        let thresholds = QualityThresholds()
        #expect(thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 100, lossPercent: 9), wasDegraded: true))
        #expect(thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 100, lossPercent: 5), wasDegraded: true))
        #expect(thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 250, lossPercent: 0), wasDegraded: true))
        #expect(!thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 249, lossPercent: 4), wasDegraded: true))
    }

    @Test func missingFiguresNeverDegrade() {
        let thresholds = QualityThresholds()
        #expect(!thresholds.isDegraded(QualityFigures(), wasDegraded: false))
        #expect(!thresholds.isDegraded(QualityFigures(roundTripMilliseconds: 30), wasDegraded: false))
        #expect(!thresholds.isDegraded(QualityFigures(lossPercent: 2, attempts: 20), wasDegraded: false))
    }
}
