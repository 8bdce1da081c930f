import Testing
import UplinkCore
import UplinkTestSupport

@Suite("AgentCore: flapping uplinks")
struct FlapDampingAgentTests {
    /// An ethernet primary and a wifi backup, both online from the start, with a 30 s hold-down.
    private func started() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration { $0.agent.holdDownMilliseconds = 30_000 })
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 3, kind: .wifi)])
        driver.answerAll()
        #expect(driver.core.primary == "eth0")
        return driver
    }

    private func isSuppressed(_ name: InterfaceName, _ driver: CoreDriver) -> Bool? {
        driver.core.state(now: driver.instant, pid: 1).uplinks.first { $0.interface == name }?.quality.suppressed
    }

    @Test func anUplinkThatFlapsTwiceInAMinuteIsKeptFromThePrimaryUntilItsPenaltyDecays() throws {
        var driver = started()
        driver.advance(to: 5_000)
        driver.dead = ["eth0"]
        driver.advance(to: 12_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        #expect(driver.core.primary == "wlan0")
        // One flap passes with the plain hold-down.
        #expect(driver.notes.isEmpty)
        driver.dead = []
        driver.advance(to: 21_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.primary == "wlan0")

        // It drops out again within its hold-down: a proving round catches it.
        driver.dead = ["eth0"]
        driver.advance(to: 28_000)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        let lastFlap = try #require(driver.hooks.last { $0.kind == .verdict && $0.interface == "eth0" })
        #expect(lastFlap.verdict == .limited)
        let flap = (lastFlap.wallSeconds - at(0).wallSeconds) * 1_000
        #expect(driver.notes.contains { if case .suppressed("eth0", _, _, _) = $0 { true } else { false } }, "\(driver.notes)")
        #expect(isSuppressed("eth0", driver) == true)

        driver.dead = []
        var releasedAt: Int?
        var primaryAt: Int?
        for time in stride(from: 29_000, through: 900_000, by: 1_000) {
            driver.advance(to: time)
            if releasedAt == nil, isSuppressed("eth0", driver) == false { releasedAt = time }
            if primaryAt == nil, driver.core.primary == "eth0" { primaryAt = time }
            if releasedAt == nil, time >= 60_000 {
                // Online, past any hold-down, and still not primary.
                #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
                #expect(driver.core.primary == "wlan0")
            }
        }
        let released = try #require(releasedAt)
        let promoted = try #require(primaryAt)
        // Two flaps about 12 s apart leave a penalty near 1 970, which takes
        // 300 s · log2(1970 / 750) ≈ 418 s to fall below 750 (hook times are whole seconds).
        #expect((flap + 410_000...flap + 427_000).contains(released), "released \(released - flap) ms after the flap")
        // Then the hold-down, counted from the release.
        #expect((released + 29_000...released + 31_000).contains(promoted), "primary \(promoted - released) ms after release")
        #expect(driver.notes.contains { if case .released("eth0", _) = $0 { true } else { false } })
        #expect(driver.primaryChanges == ["eth0", "wlan0", "eth0"])
        #expect(driver.hooks.last { $0.kind == .primary }?.primaryReason == .recovered)
    }

    @Test func aSuppressedUplinkStillBecomesPrimaryWhenNothingElseIsOnline() {
        var driver = started()
        driver.advance(to: 5_000)
        driver.dead = ["eth0"]
        driver.advance(to: 12_000)
        driver.dead = []
        driver.advance(to: 21_000)
        driver.dead = ["eth0"]
        driver.advance(to: 28_000)
        #expect(isSuppressed("eth0", driver) == true)
        driver.dead = ["wlan0"]
        driver.advance(to: 60_000)
        #expect(driver.core.verdict(of: "wlan0")?.verdict == .limited)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(isSuppressed("eth0", driver) == true)
        #expect(driver.core.primary == "eth0")
        #expect(!driver.notes.contains { if case .passedOver = $0 { true } else { false } }, "\(driver.notes)")
    }
}
