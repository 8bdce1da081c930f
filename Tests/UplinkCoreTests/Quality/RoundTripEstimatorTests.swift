import Testing
import UplinkCore
import UplinkTestSupport

@Suite("RoundTripEstimator: adaptive time limits")
struct RoundTripEstimatorTests {
    @Test func theCeilingUntilSomethingWasLearned() {
        #expect(RoundTripEstimator().timeout(floorMilliseconds: 1_000, ceilingMilliseconds: 5_000) == 5_000)
    }

    @Test func aFastLinkGetsTheFloor() {
        var estimator = RoundTripEstimator()
        for sample in [3, 4, 2, 3, 5] { estimator.add(sampleMilliseconds: sample) }
        #expect(estimator.timeout(floorMilliseconds: 1_000, ceilingMilliseconds: 5_000) == 1_000)
    }

    @Test func aSlowLinkKeepsTheTimeItNeeds() {
        // A geostationary satellite: about 1.3 s per exchange, some jitter.
        var estimator = RoundTripEstimator()
        for sample in [1_300, 1_250, 1_400, 1_320, 1_280] { estimator.add(sampleMilliseconds: sample) }
        let limit = estimator.timeout(floorMilliseconds: 1_000, ceilingMilliseconds: 10_000)
        #expect(limit > 2 * 1_400)
        #expect(limit < 10_000)
        // Never beyond the configured ceiling.
        #expect(estimator.timeout(floorMilliseconds: 1_000, ceilingMilliseconds: 2_000) == 2_000)
    }

    @Test func variationWidensTheLimit() {
        var steady = RoundTripEstimator(), jittery = RoundTripEstimator()
        for sample in [200, 200, 200, 200, 200, 200] { steady.add(sampleMilliseconds: sample) }
        for sample in [100, 300, 100, 300, 100, 300] { jittery.add(sampleMilliseconds: sample) }
        #expect(jittery.timeout(floorMilliseconds: 0, ceilingMilliseconds: 60_000)
            > steady.timeout(floorMilliseconds: 0, ceilingMilliseconds: 60_000))
    }

    @Test func resetForgets() {
        var estimator = RoundTripEstimator()
        estimator.add(sampleMilliseconds: 10)
        estimator.reset()
        #expect(estimator.smoothedMilliseconds == nil)
    }
}
