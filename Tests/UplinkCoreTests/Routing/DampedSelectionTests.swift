import Testing
import UplinkCore
import UplinkTestSupport

@Suite("PrimarySelector: flap damping and degraded uplinks")
struct DampedSelectionTests {
    private func candidate(_ name: InterfaceName, _ kind: InterfaceKind, _ verdict: Verdict = .online, since: Int = 0,
                           recovered: Bool = true, suppressed: Bool = false, degraded: Bool = false,
                           healthy: Bool = true, metered: Bool = false, degradedNow: Bool? = nil) -> PrimarySelector.Candidate {
        var candidate = PrimarySelector.Candidate(name: name, kind: kind, verdict: verdict, onlineSinceMilliseconds: since,
                                                  recovered: recovered)
        candidate.suppressed = suppressed
        candidate.degraded = degraded
        candidate.degradedNow = degradedNow ?? degraded
        candidate.healthy = healthy && !degraded
        candidate.metered = metered
        return candidate
    }

    /// A selector whose primary is `name`, chosen at start-up.
    private func started(with first: PrimarySelector.Candidate) -> PrimarySelector {
        var selector = PrimarySelector()
        var start = first
        start.recovered = false
        _ = selector.select(from: [start], policy: policy(), now: 0)
        return selector
    }

    @Test func aFreshlyDegradedUplinkIsNotTakenBackFromOneNearAMark() {
        // wlan0's figures sit between half a mark and the mark (not clearly healthy,
        // not degraded); eth0 degraded again a moment ago (not lasting yet). Whatever
        // flickers, eth0 must not come back only to be left again.
        var selector = started(with: candidate("wlan0", .wifi))
        let uplinks = [candidate("eth0", .ethernet, since: 0, healthy: false, degradedNow: true),
                       candidate("wlan0", .wifi, healthy: false)]
        var changed = selector.select(from: uplinks, policy: policy(), now: 100_000)
        #expect(!changed)
        #expect(selector.primary == "wlan0")
        // Not degraded any more: back after its hold-down.
        let recovered = [candidate("eth0", .ethernet, since: 100_000), candidate("wlan0", .wifi, healthy: false)]
        changed = selector.select(from: recovered, policy: policy(), now: 100_000)
        #expect(!changed)
        changed = selector.select(from: recovered, policy: policy(), now: 130_000)
        #expect(changed)
        #expect(selector.primary == "eth0")
    }

    // MARK: suppression

    @Test func aSuppressedPreferredUplinkDoesNotTakeBackThePrimary() {
        var selector = started(with: candidate("wlan0", .wifi))
        let uplinks = [candidate("eth0", .ethernet, suppressed: true), candidate("wlan0", .wifi)]
        let changed = selector.select(from: uplinks, policy: policy(), now: 100_000)
        #expect(!changed)
        #expect(selector.primary == "wlan0")
        #expect(selector.passedOverSuppressed == ["eth0"])
        #expect(selector.heldDown.isEmpty)
        #expect(selector.holdDownEndsMilliseconds == nil)
    }

    @Test func onceReleasedItTakesBackThePrimaryAfterItsHoldDown() {
        var selector = started(with: candidate("wlan0", .wifi))
        _ = selector.select(from: [candidate("eth0", .ethernet, suppressed: true), candidate("wlan0", .wifi)],
                            policy: policy(), now: 100_000)
        // Released at 200 s: the hold-down counts from then.
        let released = [candidate("eth0", .ethernet, since: 200_000), candidate("wlan0", .wifi)]
        var changed = selector.select(from: released, policy: policy(), now: 200_000)
        #expect(!changed)
        #expect(selector.heldDown == ["eth0"])
        #expect(selector.passedOverSuppressed.isEmpty)
        changed = selector.select(from: released, policy: policy(), now: 230_000)
        #expect(changed)
        #expect(selector.primary == "eth0")
        #expect(selector.changeReason == .recovered)
    }

    @Test func whenThePrimaryFailsASuppressedUplinkIsPassedOverForTheNext() {
        var selector = started(with: candidate("wwan0", .wwan))
        let uplinks = [candidate("eth0", .ethernet, suppressed: true), candidate("wlan0", .wifi),
                       candidate("wwan0", .wwan, .limited)]
        let changed = selector.select(from: uplinks, policy: policy(), now: 10_000)
        #expect(changed)
        #expect(selector.primary == "wlan0")
        #expect(selector.passedOverSuppressed == ["eth0"])
        #expect(selector.changeReason == .lost)
    }

    @Test func aSuppressedUplinkIsStillChosenWhenNothingElseIsOnline() {
        var selector = started(with: candidate("wlan0", .wifi))
        let uplinks = [candidate("eth0", .ethernet, suppressed: true), candidate("wlan0", .wifi, .limited)]
        let changed = selector.select(from: uplinks, policy: policy(), now: 10_000)
        #expect(changed)
        #expect(selector.primary == "eth0")
        #expect(selector.changeReason == .lost)
        // It was chosen, not passed over (the agent logs each name here as passed over).
        #expect(!selector.passedOverSuppressed.contains("eth0"))
    }

    // MARK: degradation

    @Test func aDegradedPrimaryHandsOverToAHealthyUnmeteredBackup() {
        var selector = started(with: candidate("eth0", .ethernet))
        _ = selector.select(from: [candidate("eth0", .ethernet), candidate("wlan0", .wifi)], policy: policy(), now: 1_000)
        #expect(selector.primary == "eth0")
        let uplinks = [candidate("eth0", .ethernet, degraded: true), candidate("wlan0", .wifi)]
        let changed = selector.select(from: uplinks, policy: policy(), now: 100_000)
        #expect(changed)
        #expect(selector.primary == "wlan0")
        #expect(selector.changeReason == .degraded)
    }

    @Test func aDegradedPrimaryStaysWhenTheBackupIsNotClearlyHealthy() {
        var selector = started(with: candidate("eth0", .ethernet))
        let uplinks = [candidate("eth0", .ethernet, degraded: true), candidate("wlan0", .wifi, healthy: false)]
        let changed = selector.select(from: uplinks, policy: policy(), now: 100_000)
        #expect(!changed)
        #expect(selector.primary == "eth0")
    }

    @Test func aDegradedPrimaryDoesNotHandOverToAMeteredBackupByDefault() {
        var selector = started(with: candidate("eth0", .ethernet))
        let uplinks = [candidate("eth0", .ethernet, degraded: true), candidate("wwan0", .wwan, metered: true)]
        #expect(policy().avoidDegraded == .unmetered)
        let changed = selector.select(from: uplinks, policy: policy(), now: 100_000)
        #expect(!changed)
        #expect(selector.primary == "eth0")
    }

    @Test func aDegradedPrimaryHandsOverToAMeteredBackupUnderAny() {
        var selector = started(with: candidate("eth0", .ethernet))
        let uplinks = [candidate("eth0", .ethernet, degraded: true), candidate("wwan0", .wwan, metered: true)]
        let changed = selector.select(from: uplinks, policy: policy { $0.avoidDegraded = .any }, now: 100_000)
        #expect(changed)
        #expect(selector.primary == "wwan0")
        #expect(selector.changeReason == .degraded)
    }

    @Test func aDegradedPrimaryNeverHandsOverUnderNo() {
        var selector = started(with: candidate("eth0", .ethernet))
        let uplinks = [candidate("eth0", .ethernet, degraded: true), candidate("wlan0", .wifi),
                       candidate("wwan0", .wwan, metered: true)]
        let changed = selector.select(from: uplinks, policy: policy { $0.avoidDegraded = .no }, now: 100_000)
        #expect(!changed)
        #expect(selector.primary == "eth0")
    }

    @Test func aDegradedPreferredUplinkIsNotTakenBackFromAHealthyOne() {
        var selector = started(with: candidate("eth0", .ethernet))
        var changed = selector.select(from: [candidate("eth0", .ethernet, degraded: true), candidate("wlan0", .wifi)],
                                      policy: policy(), now: 100_000)
        #expect(changed)
        #expect(selector.primary == "wlan0")
        // Long past any hold-down, eth0 is still degraded: no going back.
        for now in [130_000, 200_000, 1_000_000] {
            changed = selector.select(from: [candidate("eth0", .ethernet, degraded: true), candidate("wlan0", .wifi)],
                                      policy: policy(), now: now)
            #expect(!changed)
            #expect(selector.primary == "wlan0")
        }
        // Healthy again from 1 000 s (the agent counts the hold-down from then).
        let healthy = [candidate("eth0", .ethernet, since: 1_000_000), candidate("wlan0", .wifi)]
        changed = selector.select(from: healthy, policy: policy(), now: 1_000_000)
        #expect(!changed)
        #expect(selector.heldDown == ["eth0"])
        changed = selector.select(from: healthy, policy: policy(), now: 1_030_000)
        #expect(changed)
        #expect(selector.primary == "eth0")
        #expect(selector.changeReason == .recovered)
    }

    @Test func aDegradedPreferredUplinkIsTakenBackFromAMeteredBackup() {
        // A lossy ethernet beats paying per byte, under the default.
        var selector = started(with: candidate("wwan0", .wwan, metered: true))
        let uplinks = [candidate("eth0", .ethernet, since: 50_000, degraded: true), candidate("wwan0", .wwan, metered: true)]
        var changed = selector.select(from: uplinks, policy: policy(), now: 50_000)
        #expect(!changed)
        changed = selector.select(from: uplinks, policy: policy(), now: 80_000)
        #expect(changed)
        #expect(selector.primary == "eth0")
    }

    @Test func underNoDegradationDoesNotKeepAPreferredUplinkOut() {
        var selector = started(with: candidate("wlan0", .wifi))
        let uplinks = [candidate("eth0", .ethernet, since: 50_000, degraded: true), candidate("wlan0", .wifi)]
        let changed = selector.select(from: uplinks, policy: policy { $0.avoidDegraded = .no }, now: 80_000)
        #expect(changed)
        #expect(selector.primary == "eth0")
    }

    // MARK: reasons

    @Test func theFirstPrimaryIsAStart() {
        var selector = PrimarySelector()
        let changed = selector.select(from: [candidate("eth0", .ethernet, recovered: false)], policy: policy(), now: 0)
        #expect(changed)
        #expect(selector.changeReason == .start)
    }

    @Test func aFailedPrimaryIsLost() {
        var selector = started(with: candidate("eth0", .ethernet))
        var changed = selector.select(from: [candidate("eth0", .ethernet, .limited), candidate("wlan0", .wifi)],
                                      policy: policy(), now: 5_000)
        #expect(changed)
        #expect(selector.changeReason == .lost)
        changed = selector.select(from: [candidate("eth0", .ethernet, .limited), candidate("wlan0", .wifi, .down)],
                                  policy: policy(), now: 6_000)
        #expect(changed)
        #expect(selector.primary == nil)
        #expect(selector.changeReason == .lost)
    }

    @Test func aPreferredUplinkBackAfterItsHoldDownIsRecovered() {
        var selector = started(with: candidate("wlan0", .wifi))
        let uplinks = [candidate("eth0", .ethernet, since: 10_000), candidate("wlan0", .wifi)]
        var changed = selector.select(from: uplinks, policy: policy(), now: 39_999)
        #expect(!changed)
        #expect(selector.changeReason == .start)
        changed = selector.select(from: uplinks, policy: policy(), now: 40_000)
        #expect(changed)
        #expect(selector.changeReason == .recovered)
    }
}
