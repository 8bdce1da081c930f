import Testing
import UplinkCore
import UplinkTestSupport

/// The agent core stepped by hand: each round answered with a verdict of the test's
/// choosing, at a time of its choosing.
@Suite("AgentCore")
struct AgentCoreTests {
    private func driver(_ interfaces: [InterfaceName: InterfaceSettings] = [:]) -> CoreDriver {
        CoreDriver(configuration(policy(), interfaces: interfaces))
    }

    @Test func startUpProbesAtOnceThenPicksThePrimary() throws {
        var driver = driver()
        let eth0 = usableLink("eth0", index: 2), wwan0 = usableLink("wwan0", index: 3)
        let started = driver.links([ObservedUplink(facts: eth0, kind: .ethernet), ObservedUplink(facts: wwan0, kind: .wwan)], at: 0)
        #expect(Set(started.rounds.keys) == ["eth0", "wwan0"])
        let afterWwan = driver.finish("wwan0", online, at: 50)
        #expect(driver.core.primary == "wwan0")
        #expect(afterWwan.hooks.map(\.kind) == [.verdict, .primary])
        // eth0's first round ends 10 ms later: start-up is no recovery, it takes over now.
        let afterEth = driver.finish("eth0", online, at: 60)
        #expect(driver.core.primary == "eth0")
        #expect(afterEth.hooks.last?.previousPrimary == "wwan0")
    }

    @Test func recoveredUplinkWaitsForHoldDown() throws {
        var driver = driver()
        let eth0 = usableLink("eth0", index: 2), wwan0 = usableLink("wwan0", index: 3)
        driver.links([ObservedUplink(facts: eth0, kind: .ethernet), ObservedUplink(facts: wwan0, kind: .wwan)], at: 0)
        driver.finish("eth0", limited, at: 10)
        driver.finish("wwan0", online, at: 20)
        #expect(driver.core.primary == "wwan0")
        // eth0 recovers at its next periodic round: two validated rounds (hysteresis; the
        // second comes fast, eth0 being suspect), then the hold-down.
        #expect(driver.core.nextWakeMilliseconds() == 10 + 60_000)
        #expect(driver.tick(at: 60_010).rounds["eth0"] != nil)
        driver.finish("eth0", online, at: 60_010)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        // Suspect now: the next round is one suspect interval away, not a full interval.
        #expect(driver.tick(at: 61_010).rounds["eth0"] != nil)
        driver.finish("eth0", online, at: 61_010)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.primary == "wwan0")
        // While its hold-down runs it proves itself with a light round every 2 s
        // (hold-down / 15), so an uplink that keeps dropping out is caught first.
        var time = 61_010
        while time + 2_000 < 91_010 {
            #expect(driver.core.nextWakeMilliseconds() == time + 2_000)
            time += 2_000
            let proving = try #require(driver.tick(at: time).rounds["eth0"])
            #expect(proving == .light)
            driver.finish("eth0", online, at: time)
            #expect(driver.core.primary == "wwan0")
        }
        #expect(driver.core.nextWakeMilliseconds() == 61_010 + 30_000)
        // Its hold-down over and freshly proven, eth0 takes over without another probe.
        let later = driver.tick(at: 91_010)
        #expect(driver.core.primary == "eth0")
        #expect(later.hooks.first?.primary == "eth0")
        #expect(later.hooks.first?.previousPrimary == "wwan0")
        #expect(later.hooks.first?.primaryReason == .recovered)
    }

    @Test func carrierLossIsImmediateAndStaleRoundsAreIgnored() throws {
        var driver = driver()
        let eth0 = usableLink("eth0", index: 2)
        driver.links([ObservedUplink(facts: eth0, kind: .ethernet)], at: 0)
        driver.finish("eth0", online, at: 10)
        #expect(driver.core.primary == "eth0")
        // A periodic round starts, then carrier drops while it is in flight.
        #expect(driver.tick(at: 60_010).rounds["eth0"] != nil)
        var lost = eth0
        lost.carrier = false
        let actions = driver.links([ObservedUplink(facts: lost, kind: .ethernet)], events: [.carrierChanged(lost)], at: 60_020)
        #expect(driver.core.verdict(of: "eth0") == Assessment(.down, reason: .noCarrier))
        #expect(driver.core.primary == nil)
        #expect(actions.hooks.map(\.kind) == [.verdict, .primary])
        // The round from before the carrier loss cannot bring it back.
        driver.finish("eth0", online, at: 60_030)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .down)
        #expect(driver.core.nextWakeMilliseconds() == nil)
        // Carrier back: probe at once; that round decides without hysteresis.
        let back = driver.links([ObservedUplink(facts: eth0, kind: .ethernet)], events: [.carrierChanged(eth0)], at: 61_000)
        #expect(back.rounds["eth0"] != nil)
        driver.finish("eth0", online, at: 61_010)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
    }

    @Test func aFailedLightRoundStartsFullRoundsWhichAloneLeaveOnline() throws {
        var driver = driver()
        let eth0 = usableLink("eth0", index: 2)
        driver.links([ObservedUplink(facts: eth0, kind: .ethernet)], at: 0)
        driver.finish("eth0", online, at: 0)
        #expect(driver.core.nextWakeMilliseconds() == 60_000)
        // The steady round is a light one; its failure changes nothing but asks for a
        // full round at once.
        let light = try #require(driver.tick(at: 60_000).rounds["eth0"])
        #expect(light == .light)
        let full = try #require(driver.finish("eth0", limited, at: 60_000).rounds["eth0"])
        #expect(full == .full)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        // Two failed full rounds (the hysteresis here), a suspect interval apart.
        driver.finish("eth0", limited, at: 60_500)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.nextWakeMilliseconds() == 61_500)
        #expect(driver.tick(at: 61_500).rounds["eth0"] != nil)
        let actions = driver.finish("eth0", limited, at: 61_500)
        #expect(driver.core.verdict(of: "eth0")?.verdict == .limited)
        #expect(actions.hooks.first?.previousVerdict == .online)
    }

    @Test func spentBudgetStopsPeriodicProbesButNotLinkEvents() throws {
        var driver = driver(["wwan0": withBudget(1_000)])
        let wwan0 = usableLink("wwan0", index: 3)
        driver.links([ObservedUplink(facts: wwan0, kind: .wwan)], at: 0)
        driver.finish("wwan0", online, bytes: 1_500, at: 10)
        #expect(driver.tick(at: 60_010).rounds.isEmpty)
        #expect(driver.core.state(now: at(60_010), pid: 1).uplinks.first?.budgetExhausted == true)
        var noRoute = wwan0
        noRoute.defaultRoutes = []
        driver.links([ObservedUplink(facts: noRoute, kind: .wwan)], events: [.defaultRouteRemoved(noRoute, defaultRoute(.ipv4))],
                     at: 60_020)
        let event = driver.links([ObservedUplink(facts: wwan0, kind: .wwan)], events: [.defaultRouteAdded(wwan0, defaultRoute(.ipv4))],
                                 at: 60_030)
        #expect(event.rounds["wwan0"] != nil)
    }

    @Test func vanishedUplinkGoesDownAndLosesPrimary() throws {
        var driver = driver()
        let eth0 = usableLink("eth0", index: 2)
        driver.links([ObservedUplink(facts: eth0, kind: .ethernet)], at: 0)
        driver.finish("eth0", online, at: 1)
        let events = driver.links([], events: [.disappeared(eth0)], at: 2).hooks
        #expect(events.map(\.kind) == [.verdict, .primary])
        #expect(events[0].reason == .noSuchInterface)
        #expect(events[1].primary == nil)
        #expect(events[1].previousPrimary == "eth0")
        #expect(driver.core.uplinkNames.isEmpty)
    }

    @Test func roundOfAVanishedUplinkCannotDecideForItsSuccessor() throws {
        var driver = driver()
        let wwan0 = usableLink("wwan0", index: 3)
        driver.links([ObservedUplink(facts: wwan0, kind: .wwan)], at: 0)
        let old = try #require(driver.inFlightRounds.first { $0.interface == "wwan0" }?.generation)
        // The modem re-enumerates while its first round is in flight.
        driver.links([], events: [.disappeared(wwan0)], at: 10)
        let reborn = usableLink("wwan0", index: 9)
        driver.links([ObservedUplink(facts: reborn, kind: .wwan)], events: [.appeared(reborn)], at: 20)
        let fresh = try #require(driver.inFlightRounds.last { $0.interface == "wwan0" }?.generation)
        #expect(fresh != old)
        // The oldest round in flight, the vanished uplink's, is answered first.
        driver.finish("wwan0", online, at: 30)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .unknown)
        driver.finish("wwan0", limited, at: 40)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
    }

    @Test func budgetSurvivesReEnumerationAndLiftsWithTheNextWindow() throws {
        var driver = driver(["wwan0": withBudget(1_000)])
        let wwan0 = usableLink("wwan0", index: 3)
        driver.links([ObservedUplink(facts: wwan0, kind: .wwan)], at: 0)
        driver.finish("wwan0", online, bytes: 1_500, at: 0)
        driver.links([], events: [.disappeared(wwan0)], at: 10)
        let reborn = usableLink("wwan0", index: 9)
        #expect(driver.links([ObservedUplink(facts: reborn, kind: .wwan)], events: [.appeared(reborn)], at: 20).rounds["wwan0"] != nil)
        driver.finish("wwan0", online, bytes: 100, at: 30)
        #expect(driver.core.state(now: at(40), pid: 1).uplinks.first?.bytesToday == 1_600)
        // The periodic round is refused and postponed to the end of the window.
        #expect(driver.tick(at: 60_030).rounds.isEmpty)
        #expect(driver.core.nextWakeMilliseconds() == ByteBudget.dayMilliseconds)
        #expect(driver.tick(at: ByteBudget.dayMilliseconds).rounds["wwan0"] != nil)
        #expect(driver.core.state(now: at(ByteBudget.dayMilliseconds), pid: 1).uplinks.first?.budgetExhausted == false)
    }

    @Test func probeNowAfterAPortalHookOverridesTheSchedule() throws {
        var driver = driver(["wlan0": withBudget(1_000)])
        let wlan0 = usableLink("wlan0", index: 4)
        driver.links([ObservedUplink(facts: wlan0, kind: .wifi)], at: 0)
        // Asked while the round is in flight: the next round follows right after it.
        driver.now = 5
        #expect(driver.core.probeNow("wlan0", now: driver.instant).rounds.isEmpty)
        let next = driver.finish("wlan0", captive, bytes: 2_000, at: 10)
        #expect(next.rounds["wlan0"] != nil)
        driver.finish("wlan0", captive, at: 20)
        // Budget spent, schedule far away: probeNow still probes at once.
        driver.now = 30
        #expect(driver.core.probeNow("wlan0", now: driver.instant).rounds["wlan0"] != nil)
        #expect(driver.core.probeNow("nosuch0", now: driver.instant).rounds.isEmpty)
    }

    @Test func uplinkDroppedByConfigurationIsNotAnUplink() throws {
        var driver = driver()
        let eth0 = usableLink("eth0", index: 2)
        driver.links([ObservedUplink(facts: eth0, kind: .ethernet)], at: 0)
        driver.finish("eth0", online, at: 1)
        let events = driver.links([], events: [], at: 2).hooks
        #expect(events.first?.reason == .notAnUplink)
    }

    @Test func stateSnapshotShowsPortalOnlyWhenCaptive() throws {
        var driver = driver()
        let wlan0 = usableLink("wlan0", index: 4)
        driver.links([ObservedUplink(facts: wlan0, kind: .wifi)], at: 0)
        driver.finish("wlan0", captive, at: 1_000)
        let state = driver.core.state(now: at(2_000), pid: 42)
        #expect(state.uplinks.first?.portalURL == "http://portal.example/login")
        #expect(state.uplinks.first?.sinceWallSeconds == 1_800_000_001)
        #expect(state.uplinks.first?.ipv4 == .captive)
    }
}
