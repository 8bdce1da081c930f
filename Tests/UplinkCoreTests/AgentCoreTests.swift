import Testing
import UplinkCore
import UplinkTestSupport

@Suite("AgentCore")
struct AgentCoreTests {
    private func report(_ name: InterfaceName, _ assessment: Assessment, bytes: Int = 500,
                        purpose: RoundPurpose = .full) -> CheckReport {
        var report = CheckReport(interface: name, kind: .ethernet, assessment: assessment, families: [.ipv4: assessment],
                                 probes: [ProbeReport(name: "a", url: "http://x/", family: .ipv4,
                                                      judgement: assessment.verdict == .online ? .valid : .broken(reason: .timeout),
                                                      status: 204, elapsedMilliseconds: 1, bytes: bytes)],
                                 elapsedMilliseconds: 1)
        report.purpose = purpose
        return report
    }

    private func plans(_ actions: [AgentCore.Action]) -> [InterfaceName: (generation: Int, purpose: RoundPurpose)] {
        var result: [InterfaceName: (generation: Int, purpose: RoundPurpose)] = [:]
        for case .startRound(let plan, let generation) in actions { result[plan.interface] = (generation, plan.purpose) }
        return result
    }

    private func rounds(_ actions: [AgentCore.Action]) -> [String: Int] {
        var result: [String: Int] = [:]
        for case .startRound(let plan, let generation) in actions { result[plan.interface.value] = generation }
        return result
    }

    private func hooks(_ actions: [AgentCore.Action]) -> [HookEvent] {
        actions.compactMap { if case .runHook(let event) = $0 { return event } else { return nil } }
    }

    @Test func startUpProbesAtOnceThenPicksThePrimary() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let eth0 = usableLink("eth0", index: 2), wwan0 = usableLink("wwan0", index: 3)
        let started = core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet), ObservedUplink(facts: wwan0, kind: .wwan)], events: [], now: at(0))
        let generations = rounds(started)
        #expect(Set(generations.keys) == ["eth0", "wwan0"])
        let afterWwan = core.roundFinished(report("wwan0", online), generation: generations["wwan0"]!, now: at(50))
        #expect(core.primary == "wwan0")
        #expect(hooks(afterWwan).map(\.kind) == [.verdict, .primary])
        // eth0's first round ends 10 ms later: start-up is no recovery, it takes over now.
        let afterEth = core.roundFinished(report("eth0", online), generation: generations["eth0"]!, now: at(60))
        #expect(core.primary == "eth0")
        #expect(hooks(afterEth).last?.previousPrimary == "wwan0")
    }

    @Test func recoveredUplinkWaitsForHoldDown() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let eth0 = usableLink("eth0", index: 2), wwan0 = usableLink("wwan0", index: 3)
        let started = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet), ObservedUplink(facts: wwan0, kind: .wwan)], events: [], now: at(0)))
        _ = core.roundFinished(report("eth0", limited), generation: started["eth0"]!, now: at(10))
        _ = core.roundFinished(report("wwan0", online), generation: started["wwan0"]!, now: at(20))
        #expect(core.primary == "wwan0")
        // eth0 recovers at its next periodic round: two validated rounds (hysteresis; the
        // second comes fast, eth0 being suspect), then the hold-down.
        #expect(core.nextWakeMilliseconds() == 10 + 60_000)
        var generation = try #require(rounds(core.tick(now: at(60_010)))["eth0"])
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(60_010))
        #expect(core.verdict(of: "eth0")?.verdict == .limited)
        // Suspect now: the next round is one suspect interval away, not a full interval.
        generation = try #require(rounds(core.tick(now: at(61_010)))["eth0"])
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(61_010))
        #expect(core.verdict(of: "eth0")?.verdict == .online)
        #expect(core.primary == "wwan0")
        // While its hold-down runs it proves itself with a light round every 2 s
        // (hold-down / 15), so an uplink that keeps dropping out is caught first.
        var time = 61_010
        while time + 2_000 < 91_010 {
            #expect(core.nextWakeMilliseconds() == time + 2_000)
            time += 2_000
            let proving = try #require(plans(core.tick(now: at(time)))["eth0"])
            #expect(proving.purpose == .light)
            _ = core.roundFinished(report("eth0", online, purpose: .light), generation: proving.generation, now: at(time))
            #expect(core.primary == "wwan0")
        }
        #expect(core.nextWakeMilliseconds() == 61_010 + 30_000)
        // Its hold-down over and freshly proven, eth0 takes over without another probe.
        let later = core.tick(now: at(91_010))
        #expect(core.primary == "eth0")
        #expect(hooks(later).first?.primary == "eth0")
        #expect(hooks(later).first?.previousPrimary == "wwan0")
        #expect(hooks(later).first?.primaryReason == .recovered)
    }

    @Test func carrierLossIsImmediateAndStaleRoundsAreIgnored() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let eth0 = usableLink("eth0", index: 2)
        let first = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet)], events: [], now: at(0)))
        _ = core.roundFinished(report("eth0", online), generation: first["eth0"]!, now: at(10))
        #expect(core.primary == "eth0")
        // A periodic round starts, then carrier drops while it is in flight.
        let periodic = rounds(core.tick(now: at(60_010)))
        #expect(periodic["eth0"] != nil)
        var lost = eth0
        lost.carrier = false
        let actions = core.linksChanged(uplinks: [ObservedUplink(facts: lost, kind: .ethernet)], events: [.carrierChanged(lost)], now: at(60_020))
        #expect(core.verdict(of: "eth0") == Assessment(.down, reason: .noCarrier))
        #expect(core.primary == nil)
        #expect(hooks(actions).map(\.kind) == [.verdict, .primary])
        // The round from before the carrier loss cannot bring it back.
        _ = core.roundFinished(report("eth0", online), generation: periodic["eth0"]!, now: at(60_030))
        #expect(core.verdict(of: "eth0")?.verdict == .down)
        #expect(core.nextWakeMilliseconds() == nil)
        // Carrier back: probe at once; that round decides without hysteresis.
        let back = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet)], events: [.carrierChanged(eth0)], now: at(61_000)))
        #expect(back["eth0"] != nil)
        _ = core.roundFinished(report("eth0", online), generation: back["eth0"]!, now: at(61_010))
        #expect(core.verdict(of: "eth0")?.verdict == .online)
    }

    @Test func aFailedLightRoundStartsFullRoundsWhichAloneLeaveOnline() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let eth0 = usableLink("eth0", index: 2)
        var generation = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet)], events: [], now: at(0)))["eth0"]!
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(0))
        #expect(core.nextWakeMilliseconds() == 60_000)
        // The steady round is a light one; its failure changes nothing but asks for a
        // full round at once.
        let light = try #require(plans(core.tick(now: at(60_000)))["eth0"])
        #expect(light.purpose == .light)
        let full = try #require(plans(core.roundFinished(report("eth0", limited, purpose: .light),
                                                         generation: light.generation, now: at(60_000)))["eth0"])
        #expect(full.purpose == .full)
        #expect(core.verdict(of: "eth0")?.verdict == .online)
        // Two failed full rounds (the hysteresis here), a suspect interval apart.
        _ = core.roundFinished(report("eth0", limited), generation: full.generation, now: at(60_500))
        #expect(core.verdict(of: "eth0")?.verdict == .online)
        #expect(core.nextWakeMilliseconds() == 61_500)
        generation = rounds(core.tick(now: at(61_500)))["eth0"]!
        let actions = core.roundFinished(report("eth0", limited), generation: generation, now: at(61_500))
        #expect(core.verdict(of: "eth0")?.verdict == .limited)
        #expect(hooks(actions).first?.previousVerdict == .online)
    }

    @Test func spentBudgetStopsPeriodicProbesButNotLinkEvents() throws {
        var settings: [InterfaceName: InterfaceSettings] = [:]
        settings["wwan0"] = withBudget(1_000)
        var core = AgentCore(configuration: configuration(policy(), interfaces: settings))
        let wwan0 = usableLink("wwan0", index: 3)
        let generation = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: wwan0, kind: .wwan)], events: [], now: at(0)))["wwan0"]!
        _ = core.roundFinished(report("wwan0", online, bytes: 1_500), generation: generation, now: at(10))
        #expect(rounds(core.tick(now: at(60_010))).isEmpty)
        #expect(core.state(now: at(60_010), pid: 1).uplinks.first?.budgetExhausted == true)
        var noRoute = wwan0
        noRoute.defaultRoutes = []
        _ = core.linksChanged(uplinks: [ObservedUplink(facts: noRoute, kind: .wwan)], events: [.defaultRouteRemoved(noRoute, defaultRoute(.ipv4))], now: at(60_020))
        let event = core.linksChanged(uplinks: [ObservedUplink(facts: wwan0, kind: .wwan)], events: [.defaultRouteAdded(wwan0, defaultRoute(.ipv4))], now: at(60_030))
        #expect(rounds(event)["wwan0"] != nil)
    }

    @Test func vanishedUplinkGoesDownAndLosesPrimary() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let eth0 = usableLink("eth0", index: 2)
        let generation = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet)], events: [], now: at(0)))["eth0"]!
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(1))
        let actions = core.linksChanged(uplinks: [], events: [.disappeared(eth0)], now: at(2))
        let events = hooks(actions)
        #expect(events.map(\.kind) == [.verdict, .primary])
        #expect(events[0].reason == .noSuchInterface)
        #expect(events[1].primary == nil)
        #expect(events[1].previousPrimary == "eth0")
        #expect(core.uplinkNames.isEmpty)
    }

    @Test func roundOfAVanishedUplinkCannotDecideForItsSuccessor() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let wwan0 = usableLink("wwan0", index: 3)
        let old = try #require(rounds(core.linksChanged(uplinks: [ObservedUplink(facts: wwan0, kind: .wwan)], events: [], now: at(0)))["wwan0"])
        // The modem re-enumerates while its first round is in flight.
        _ = core.linksChanged(uplinks: [], events: [.disappeared(wwan0)], now: at(10))
        let reborn = usableLink("wwan0", index: 9)
        let fresh = try #require(rounds(core.linksChanged(uplinks: [ObservedUplink(facts: reborn, kind: .wwan)], events: [.appeared(reborn)], now: at(20)))["wwan0"])
        #expect(fresh != old)
        _ = core.roundFinished(report("wwan0", online), generation: old, now: at(30))
        #expect(core.verdict(of: "wwan0")?.verdict == .unknown)
        _ = core.roundFinished(report("wwan0", limited), generation: fresh, now: at(40))
        #expect(core.verdict(of: "wwan0")?.verdict == .limited)
    }

    @Test func budgetSurvivesReEnumerationAndLiftsWithTheNextWindow() throws {
        var settings: [InterfaceName: InterfaceSettings] = [:]
        settings["wwan0"] = withBudget(1_000)
        var core = AgentCore(configuration: configuration(policy(), interfaces: settings))
        let wwan0 = usableLink("wwan0", index: 3)
        let first = try #require(rounds(core.linksChanged(uplinks: [ObservedUplink(facts: wwan0, kind: .wwan)], events: [], now: at(0)))["wwan0"])
        _ = core.roundFinished(report("wwan0", online, bytes: 1_500), generation: first, now: at(0))
        _ = core.linksChanged(uplinks: [], events: [.disappeared(wwan0)], now: at(10))
        let reborn = usableLink("wwan0", index: 9)
        let second = try #require(rounds(core.linksChanged(uplinks: [ObservedUplink(facts: reborn, kind: .wwan)], events: [.appeared(reborn)], now: at(20)))["wwan0"])
        _ = core.roundFinished(report("wwan0", online, bytes: 100), generation: second, now: at(30))
        #expect(core.state(now: at(40), pid: 1).uplinks.first?.bytesToday == 1_600)
        // The periodic round is refused and postponed to the end of the window.
        #expect(rounds(core.tick(now: at(60_030))).isEmpty)
        #expect(core.nextWakeMilliseconds() == ByteBudget.dayMilliseconds)
        #expect(rounds(core.tick(now: at(ByteBudget.dayMilliseconds)))["wwan0"] != nil)
        #expect(core.state(now: at(ByteBudget.dayMilliseconds), pid: 1).uplinks.first?.budgetExhausted == false)
    }

    @Test func probeNowAfterAPortalHookOverridesTheSchedule() throws {
        var settings: [InterfaceName: InterfaceSettings] = [:]
        settings["wlan0"] = withBudget(1_000)
        var core = AgentCore(configuration: configuration(policy(), interfaces: settings))
        let wlan0 = usableLink("wlan0", index: 4)
        let first = try #require(rounds(core.linksChanged(uplinks: [ObservedUplink(facts: wlan0, kind: .wifi)], events: [], now: at(0)))["wlan0"])
        // Asked while the round is in flight: the next round follows right after it.
        #expect(rounds(core.probeNow("wlan0", now: at(5))).isEmpty)
        let next = rounds(core.roundFinished(report("wlan0", captive, bytes: 2_000), generation: first, now: at(10)))
        #expect(next["wlan0"] != nil)
        _ = core.roundFinished(report("wlan0", captive), generation: next["wlan0"]!, now: at(20))
        // Budget spent, schedule far away: probeNow still probes at once.
        #expect(rounds(core.probeNow("wlan0", now: at(30)))["wlan0"] != nil)
        #expect(rounds(core.probeNow("nosuch0", now: at(30))).isEmpty)
    }

    @Test func uplinkDroppedByConfigurationIsNotAnUplink() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let eth0 = usableLink("eth0", index: 2)
        let generation = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: eth0, kind: .ethernet)], events: [], now: at(0)))["eth0"]!
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(1))
        let events = hooks(core.linksChanged(uplinks: [], events: [], now: at(2)))
        #expect(events.first?.reason == .notAnUplink)
    }

    @Test func stateSnapshotShowsPortalOnlyWhenCaptive() throws {
        var core = AgentCore(configuration: configuration(policy()))
        let wlan0 = usableLink("wlan0", index: 4)
        let generation = rounds(core.linksChanged(uplinks: [ObservedUplink(facts: wlan0, kind: .wifi)], events: [], now: at(0)))["wlan0"]!
        _ = core.roundFinished(report("wlan0", captive), generation: generation, now: at(1_000))
        let state = core.state(now: at(2_000), pid: 42)
        #expect(state.uplinks.first?.portalURL == "http://portal.example/login")
        #expect(state.uplinks.first?.sinceWallSeconds == 1_800_000_001)
        #expect(state.uplinks.first?.ipv4 == .captive)
    }
}
