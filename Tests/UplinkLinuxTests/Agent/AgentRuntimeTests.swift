import Glibc
import Testing
import UplinkCore
import UplinkLinux
import UplinkTestSupport

/// The agent's own code (not the core's decisions, which the core tests cover): how it
/// wires link batches, rounds, hooks, reloads and shutdown, driven through fakes with a
/// manual clock, without root.
@Suite("Agent runtime")
struct AgentRuntimeTests {
    @Test func probesAtStartPublishesTheVerdictAndProbesAgainAfterTheInterval() throws {
        let harness = try AgentHarness([usableLink("eth0", index: 2)])
        harness.prober.outcomes["eth0"] = validated
        try harness.agent.start()
        try harness.advance(10)
        #expect(harness.prober.requests(on: "eth0") == 1)
        #expect(harness.verdict("eth0") == .online)
        #expect(harness.state?.primary == "eth0")
        try harness.advance(59_000)
        #expect(harness.prober.requests(on: "eth0") == 1)
        try harness.advance(1_100)
        #expect(harness.prober.requests(on: "eth0") == 2)
        #expect(harness.resolver.calls == 0)
    }

    @Test func carrierLossIsDownAtOnceAndCarrierBackProbesAtOnce() throws {
        let harness = try AgentHarness([usableLink("eth0", index: 2)])
        harness.prober.outcomes["eth0"] = validated
        try harness.agent.start()
        try harness.advance(10)
        harness.links.set([usableLink("eth0", index: 2, carrier: false)])
        #expect(harness.verdict("eth0") == .down)
        #expect(harness.state?.primary == nil)
        #expect(harness.hooks.events.map(\.kind) == [.verdict, .primary, .verdict, .primary])
        harness.links.set([usableLink("eth0", index: 2)])
        try harness.advance(10)
        #expect(harness.prober.requests(on: "eth0") == 2)
        #expect(harness.verdict("eth0") == .online)
    }

    @Test func kindsAreReadOncePerInterfaceAgainAfterARenameAndAfterAReload() throws {
        let harness = try AgentHarness([usableLink("eth0", index: 2), usableLink("wwan0", index: 3)])
        try harness.agent.start()
        for metric in [100, 200, 300] {
            var eth0 = usableLink("eth0", index: 2)
            eth0.defaultRoutes = [defaultRoute(.ipv4, via: "10.0.2.1", metric: metric)]
            harness.links.set([eth0, usableLink("wwan0", index: 3)])
        }
        #expect(harness.kinds.reads == ["eth0": 1, "wwan0": 1])
        harness.links.set([usableLink("lan0", index: 2), usableLink("wwan0", index: 3)])
        #expect(harness.kinds.reads == ["eth0": 1, "lan0": 1, "wwan0": 1])
        harness.agent.apply(AgentHarness.configuration())
        #expect(harness.kinds.reads == ["eth0": 1, "lan0": 2, "wwan0": 2])
    }

    @Test func reloadRefusesABrokenFileAndAppliesAGoodOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let probes = "[check]\ndefault-probes = no\n[probe lab]\nurl = http://192.0.2.80/generate_204\n"
        let agent = "[agent]\nfailures-to-leave-online = 1\nsuccesses-to-return = 1\nhold-down = 0s\n"
        try directory.write("uplinkd.conf", probes + agent)
        let loader = ConfigurationLoader(explicitPath: "\(directory.path)/uplinkd.conf")
        let harness = try AgentHarness([usableLink("eth0", index: 2), usableLink("wwan0", index: 3)],
                                       configuration: try loader.load(), loader: loader)
        harness.prober.outcomes["eth0"] = validated
        harness.prober.outcomes["wwan0"] = validated
        try harness.agent.start()
        try harness.advance(10)
        #expect(harness.state?.primary == "eth0")

        try directory.write("uplinkd.conf", probes + agent + "priority = wwan ethernet\ncolour = blue\n")
        harness.agent.reload()
        try harness.advance(10)
        #expect(harness.state?.primary == "eth0")

        try directory.write("uplinkd.conf", probes + agent + "priority = wwan ethernet\n")
        harness.agent.reload()
        try harness.advance(10)
        #expect(harness.state?.primary == "wwan0")
    }

    @Test func aFinishedPortalHookProbesThatUplinkAgainAtOnce() throws {
        let harness = try AgentHarness([usableLink("wlan0", index: 4)])
        harness.prober.outcomes["wlan0"] = portal
        harness.hooks.hold()
        try harness.agent.start()
        try harness.advance(10)
        #expect(harness.verdict("wlan0") == .captive)
        #expect(harness.prober.requests(on: "wlan0") == 1)
        // The login hook worked: the next probe validates, long before the interval.
        harness.prober.outcomes["wlan0"] = validated
        harness.hooks.finish()
        try harness.advance(10)
        #expect(harness.prober.requests(on: "wlan0") == 2)
        #expect(harness.verdict("wlan0") == .online)
    }

    /// The file is written when the agent decides and again when the hooks have acted:
    /// a reader waiting for `hooks_done` to reach `decision` finds the effect in place.
    @Test func theStateFileTellsWhenTheHooksCaughtUp() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let harness = try eth0OnlineWithItsHooksHeld(stateFile: "\(directory.path)/state")
        let held = try StateFileFormat.decode(try #require(directory.read("state")))
        #expect(held.primary == "eth0" && held.decision >= 2 && held.hooksDone == 0)
        #expect(harness.hooks.events.map(\.decision) == Array(1...held.decision))
        harness.hooks.finish()
        let done = try StateFileFormat.decode(try #require(directory.read("state")))
        #expect(done.decision == held.decision && done.hooksDone == done.decision)
    }

    /// An agent with eth0, validated and primary 10 ms after start, writing its state to
    /// `stateFile`, whose hooks are still running (held) for every event so far.
    private func eth0OnlineWithItsHooksHeld(stateFile: String) throws -> AgentHarness {
        let harness = try AgentHarness([usableLink("eth0", index: 2)], options: AgentHarness.options(stateFile: stateFile))
        harness.prober.outcomes["eth0"] = validated
        harness.hooks.hold()
        try harness.agent.start()
        try harness.advance(10)
        return harness
    }

    @Test func stopWaitsForTheRunningHookThenWritesTheFinalState() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let harness = try eth0OnlineWithItsHooksHeld(stateFile: "\(directory.path)/state")
        #expect(directory.read("state")?.contains("\nstopped no\n") == true)

        harness.agent.stop(reason: "test")
        try harness.advance(100)
        #expect(!harness.loop.isStopping)
        #expect(directory.read("state")?.contains("\nstopped no\n") == true)
        // Link changes after stop start no round.
        harness.links.set([usableLink("eth0", index: 2, carrier: false)])
        harness.hooks.finish()
        #expect(harness.loop.isStopping)
        let final = try #require(directory.read("state"))
        #expect(final.contains("\nstopped yes\n"))
        #expect(final.contains("\nuplink eth0 verdict online\n"))
        #expect(harness.prober.requests(on: "eth0") == 1)
        // The hooks heard the stop last, about the primary, with no primary after it.
        let stop = try #require(harness.hooks.events.last)
        #expect(stop.kind == .stop)
        #expect(stop.interface == "eth0")
        #expect(stop.primary == nil && stop.previousPrimary == "eth0")
        #expect(stop.environment.contains("UPLINK_IPV4_ADDRESSES=10.0.2.2/24"))
        #expect(stop.environment.contains("UPLINK_IPV4_GATEWAY=10.0.2.1"))
    }

    @Test func aReloadAppliesTheLogLevelUnlessTheCommandLineSetOne() throws {
        let saved = Log.threshold
        defer { Log.threshold = saved }
        var daemon = AgentHarness.options()
        daemon.setsLogLevel = true
        let harness = try AgentHarness([usableLink("eth0", index: 2)], options: daemon)
        #expect(Log.threshold == .notice)
        harness.agent.apply(AgentHarness.configuration { $0.agent.logLevel = .warning })
        #expect(Log.threshold == .warning)

        var options = daemon
        options.logLevelOverride = .info
        let verbose = try AgentHarness([usableLink("eth0", index: 2)], options: options)
        #expect(Log.threshold == .info)
        verbose.agent.apply(AgentHarness.configuration { $0.agent.logLevel = .error })
        #expect(Log.threshold == .info)
        // --verbose never makes it quieter than the file asks.
        verbose.agent.apply(AgentHarness.configuration { $0.agent.logLevel = .debug })
        #expect(Log.threshold == .debug)
        // An embedding program's threshold is its own.
        Log.threshold = .error
        _ = try AgentHarness([usableLink("eth0", index: 2)])
        #expect(Log.threshold == .error)
    }

    @Test func thePrimarysCountersAreSampledAndAStallMovesThePrimary() throws {
        let configuration = AgentHarness.configuration { $0.probing.stallWindow = .value(1_500) }
        let harness = try AgentHarness([usableLink("eth0", index: 2), usableLink("wwan0", index: 3)],
                                       configuration: configuration)
        harness.prober.outcomes["eth0"] = validated
        harness.prober.outcomes["wwan0"] = validated
        harness.traffic.counters["eth0"] = (100, 100)
        try harness.agent.start()
        try harness.advance(10)
        #expect(harness.state?.primary == "eth0")
        // LAN traffic flows through eth0 and is answered; only eth0 is sampled.
        for _ in 0..<8 {
            harness.traffic.send(10, on: "eth0", answered: true)
            try harness.advance(250)
        }
        #expect(harness.traffic.samples["eth0", default: 0] >= 2)  // every second while idle, then faster
        #expect(harness.traffic.samples["wwan0"] == nil)
        // The upstream dies with carrier up: packets leave, nothing comes back.
        harness.prober.outcomes["eth0"] = .failure(.timeout)
        let requestsBefore = harness.prober.requests(on: "eth0")
        for _ in 0..<10 {
            harness.traffic.send(2, on: "eth0", answered: false)
            try harness.advance(250)
        }
        #expect(harness.prober.requests(on: "eth0") > requestsBefore)
        #expect(harness.verdict("eth0") == .limited)
        #expect(harness.state?.primary == "wwan0")
        #expect(harness.hooks.events.last?.kind == .primary)
    }

    @Test func aLeaseThatSaysMeteredMakesTheUplinkMetered() throws {
        let harness = try AgentHarness([usableLink("wlan0", index: 4), usableLink("wlan1", index: 5)])
        harness.files.metered = ["wlan1"]
        try harness.agent.start()
        try harness.advance(10)
        #expect(harness.state?.uplinks.first { $0.interface == "wlan0" }?.metered == false)
        #expect(harness.state?.uplinks.first { $0.interface == "wlan1" }?.metered == true)
    }

    @Test func theRouteHooksOwnRoutesAreNotTheUplinksAndStartNoRound() throws {
        var eth0 = usableLink("eth0", index: 2)
        let harness = try AgentHarness([eth0, usableLink("wwan0", index: 3)])
        harness.prober.outcomes["eth0"] = validated
        harness.prober.outcomes["wwan0"] = validated
        try harness.agent.start()
        try harness.advance(10)
        let before = harness.prober.requests.count
        // The route-failover hook adds its copy (protocol 77) of eth0's route...
        eth0.defaultRoutes.append(DefaultRoute(family: .ipv4, gateway: IPAddress("10.0.2.1"), metric: 10, table: 254,
                                               protocolNumber: 77))
        harness.links.set([eth0, usableLink("wwan0", index: 3)])
        try harness.advance(10)
        #expect(harness.prober.requests.count == before)
        // ...and an interface whose only default route is uplinkd's own has none: it is
        // no longer an uplink at all (automatic selection), not a routable one.
        var onlyOwn = usableLink("eth0", index: 2)
        onlyOwn.defaultRoutes = [DefaultRoute(family: .ipv4, gateway: IPAddress("10.0.2.1"), metric: 10, table: 254,
                                              protocolNumber: 77)]
        harness.links.set([onlyOwn, usableLink("wwan0", index: 3)])
        try harness.advance(10)
        #expect(harness.state?.uplinks.contains { $0.interface == "eth0" } == false)
        #expect(harness.hooks.events.contains { $0.interface == "eth0" && $0.reason == .notAnUplink })
    }

    @Test func theAgentReadsNoFileOfTheHostBehindItsSeams() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let configuration = AgentHarness.configuration {
            $0.customProbes[0].expectation.validator = ValidatorCommand(path: "/usr/local/bin/check-answer", arguments: [])
            $0.export.prometheusTextfilePath = "\(directory.path)/uplinkd.prom"
        }
        let harness = try AgentHarness([usableLink("eth0", index: 2), usableLink("wlan0", index: 3)],
                                       configuration: configuration,
                                       options: AgentHarness.options(stateFile: "\(directory.path)/state"))
        harness.prober.outcomes["eth0"] = validated
        harness.prober.outcomes["wlan0"] = validated
        let (_, paths) = try OpenedPaths.recording {
            try harness.agent.start()
            try harness.advance(10)
            // A link change, rounds on schedule, a reload and the stop: every path the
            // agent takes that could reach for lease, resolver, sysfs or validator files.
            harness.links.set([usableLink("eth0", index: 2, carrier: false), usableLink("wlan0", index: 3)])
            try harness.advance(10)
            harness.links.set([usableLink("eth0", index: 2), usableLink("wlan0", index: 3)])
            try harness.advance(130_000)
            harness.agent.apply(configuration)
            try harness.advance(10)
            harness.agent.stop(reason: "test")
            try harness.advance(10)
        }
        #expect(harness.loop.isStopping)
        #expect(harness.files.serverLookups > 0)
        #expect(harness.validator.validated > 0)
        // The recorder saw the agent's own writes (the state file, the textfile)...
        #expect(!paths.isEmpty)
        // ...and nothing else.
        let outside = Set(paths.filter { $0 != directory.path && !$0.hasPrefix("\(directory.path)/") })
        #expect(outside.isEmpty, "opened outside the test's directory: \(outside.sorted())")
    }
}
