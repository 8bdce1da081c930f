import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Flap damping")
struct FlapDampingTests {
    let defaults = DampingSettings()

    private func isClose(_ value: Double, to expected: Double, relative: Double = 1e-6) -> Bool {
        abs(value - expected) <= relative * abs(expected)
    }

    /// Flapped at 0 and 30 s: suppressed with a penalty of 1000 · 2^(-0.1) + 1000.
    private func flappedTwice() -> FlapDamping {
        var damping = FlapDamping()
        _ = damping.flapped(at: 0, settings: defaults)
        _ = damping.flapped(at: 30_000, settings: defaults)
        return damping
    }

    @Test func oneFlapDoesNotSuppressAtTheDefaults() {
        var damping = FlapDamping()
        let suppressedNow = damping.flapped(at: 10_000, settings: defaults)
        #expect(!suppressedNow)
        #expect(!damping.suppressed)
        #expect(damping.penalty(at: 10_000, settings: defaults) == 1_000)
        #expect(damping.releaseMilliseconds(settings: defaults) == nil)
    }

    @Test func twoFlapsThirtySecondsApartSuppress() {
        var damping = FlapDamping()
        _ = damping.flapped(at: 0, settings: defaults)
        let suppressedNow = damping.flapped(at: 30_000, settings: defaults)
        #expect(suppressedNow)
        #expect(damping.suppressed)
        #expect(isClose(damping.penalty(at: 30_000, settings: defaults), to: 1_933.032_991_536_807_5))
    }

    @Test func aFurtherFlapWhileSuppressedIsNotANewSuppressionButPostponesTheRelease() {
        var damping = flappedTwice()
        let release = damping.releaseMilliseconds(settings: defaults)
        let suppressedAgain = damping.flapped(at: 60_000, settings: defaults)
        #expect(!suppressedAgain)
        #expect(damping.suppressed)
        let later = damping.releaseMilliseconds(settings: defaults)
        #expect(later.map { $0 > release! } == true)
    }

    @Test func thePenaltyHalvesEveryHalfLife() {
        var damping = FlapDamping()
        _ = damping.flapped(at: 0, settings: defaults)
        #expect(isClose(damping.penalty(at: 300_000, settings: defaults), to: 500))
        #expect(isClose(damping.penalty(at: 600_000, settings: defaults), to: 250))
        // Between whole half-lives too (the fraction comes from a series).
        #expect(isClose(damping.penalty(at: 150_000, settings: defaults), to: 707.106_781_186_547_6))
        let start = damping.penalty(at: 123_456, settings: defaults)
        #expect(isClose(damping.penalty(at: 423_456, settings: defaults), to: start / 2))
    }

    @Test func releaseIsTheFirstMillisecondBelowTheReuseLimit() throws {
        var damping = flappedTwice()
        let release = try #require(damping.releaseMilliseconds(settings: defaults))
        // 30 s + 300 s · log2(1933.03 / 750).
        #expect((439_700...439_850).contains(release), "\(release)")
        #expect(damping.penalty(at: release - 1, settings: defaults) >= Double(defaults.reuseLimit))
        #expect(damping.penalty(at: release, settings: defaults) < Double(defaults.reuseLimit))

        let early = damping.update(at: release - 1, settings: defaults)
        #expect(!early)
        #expect(damping.suppressed)
        #expect(damping.releasedMilliseconds == nil)
        let onTime = damping.update(at: release, settings: defaults)
        #expect(onTime)
        #expect(!damping.suppressed)
        #expect(damping.releasedMilliseconds == release)
        #expect(damping.releaseMilliseconds(settings: defaults) == nil)
        let again = damping.update(at: release + 1, settings: defaults)
        #expect(!again)
    }

    @Test func manyFlapsNeverSuppressLongerThanTheMaximum() throws {
        var damping = FlapDamping()
        for second in 0..<200 { _ = damping.flapped(at: second * 1_000, settings: defaults) }
        let last = 199_000
        // The ceiling decays to the reuse limit in the maximum suppress time: 750 · 2^6.
        let ceiling = Double(defaults.reuseLimit) * 64
        #expect(damping.penalty(at: last, settings: defaults) <= ceiling * (1 + 1e-9))
        let release = try #require(damping.releaseMilliseconds(settings: defaults))
        #expect(release <= last + defaults.maximumSuppressMilliseconds,
                "suppressed until \(release - last) ms after the last flap")
        #expect(release > last + defaults.maximumSuppressMilliseconds - 1_000)
    }

    @Test func aShorterMaximumLowersTheCeiling() {
        var settings = DampingSettings()
        settings.maximumSuppressMilliseconds = 450_000
        var damping = FlapDamping()
        for second in 0..<20 { _ = damping.flapped(at: second * 1_000, settings: settings) }
        // 750 · 2^1.5.
        #expect(isClose(damping.penalty(at: 19_000, settings: settings), to: 2_121.320_343_559_642_4))
    }

    @Test func aReloadThatShortensTheMaximumReleasesAtItsNewBound() throws {
        var damping = FlapDamping()
        let settings = DampingSettings()
        _ = damping.flapped(at: 0, settings: settings)
        _ = damping.flapped(at: 1_000, settings: settings)
        #expect(damping.suppressed)
        var shorter = settings
        shorter.maximumSuppressMilliseconds = 60_000
        // The penalty is still far above the reuse limit at 61 s; the bound wins, and
        // the release time is never one that has passed while suppressed.
        let release = try #require(damping.releaseMilliseconds(settings: shorter))
        #expect(release == 61_000)
        var released = damping.update(at: 60_999, settings: shorter)
        #expect(!released)
        released = damping.update(at: 61_000, settings: shorter)
        #expect(released)
        #expect(!damping.suppressed)
    }

    @Test func noPenaltyPerFlapNeverSuppresses() {
        var settings = DampingSettings()
        settings.penaltyPerFlap = 0
        var damping = FlapDamping()
        for second in 0..<50 {
            let suppressedNow = damping.flapped(at: second * 1_000, settings: settings)
            #expect(!suppressedNow)
        }
        #expect(!damping.suppressed)
        #expect(damping.penalty(at: 50_000, settings: settings) == 0)
        #expect(damping.releaseMilliseconds(settings: settings) == nil)
    }
}
