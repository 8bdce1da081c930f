import Testing
import UplinkCore
import UplinkLinux
import UplinkTestSupport

/// The agent looks after uplinkd's routing entries: leftovers go at start, the entries
/// go at a stop unless kept, and a change made behind its back sends the hooks a
/// repair event. The hooks here are recorded, not run.
@Suite("Agent routing entries")
struct AgentRoutingTests {
    static let ownRule = RoutingRule(family: .ipv4, priority: 32_500, table: 254, protocolNumber: 77)
    static let tableRule = RoutingRule(family: .ipv4, priority: 32_501, table: 7_077, protocolNumber: 77)
    static let tableRoute = OwnedRoute(family: .ipv4, destination: "default", gateway: IPAddress("10.0.2.1"),
                                       interfaceIndex: 2, table: 7_077, metric: 0, protocolNumber: 77)
    static let othersRule = RoutingRule(family: .ipv4, priority: 1_000, table: 100, protocolNumber: 4)

    func harness(keep: Bool = false, manages: Bool = true) throws -> AgentHarness {
        var options = AgentHarness.options()
        options.managesRouting = manages
        let configuration = AgentHarness.configuration { $0.agent.routing.keepOnStop = keep }
        let harness = try AgentHarness([usableLink("eth0", index: 2), usableLink("wwan0", index: 3)],
                                       configuration: configuration, options: options)
        harness.prober.outcomes["eth0"] = validated
        harness.prober.outcomes["wwan0"] = validated
        return harness
    }

    /// What the route-failover hook would leave with eth0 primary.
    func applyHook(_ links: FakeLinks) {
        links.rules = [Self.ownRule, Self.tableRule, Self.othersRule]
        links.routes = [Self.tableRoute]
    }

    @Test func leftoversGoAtStartAndTheEntriesAtTheStop() throws {
        let harness = try harness()
        applyHook(harness.links)  // a crash left them
        try harness.agent.start()
        #expect(harness.links.removals == 1)
        #expect(harness.links.rules == [Self.othersRule], "another tool's rule stays")
        try harness.advance(10)
        #expect(harness.state?.primary == "eth0")
        applyHook(harness.links)
        harness.agent.stop(reason: "test")
        #expect(harness.links.removals == 2)
        #expect(harness.links.rules == [Self.othersRule] && harness.links.routes.isEmpty)
    }

    @Test func keptEntriesStayAcrossStartAndStop() throws {
        let harness = try harness(keep: true)
        applyHook(harness.links)
        try harness.agent.start()
        try harness.advance(10)
        harness.agent.stop(reason: "test")
        #expect(harness.links.removals == 0)
        #expect(harness.links.rules.count == 3)
    }

    @Test func anEmbeddingProgramLeavesThemAlone() throws {
        let harness = try harness(manages: false)
        applyHook(harness.links)
        try harness.agent.start()
        try harness.advance(10)
        harness.links.changeRouting { $0.rules.removeAll() }
        try harness.advance(1_000)
        harness.agent.stop(reason: "test")
        #expect(harness.links.removals == 0)
        #expect(!harness.hooks.events.contains { $0.kind == .repair })
    }

    @Test func aRuleDeletedBehindTheAgentsBackIsRepaired() throws {
        let harness = try harness()
        try harness.agent.start()
        harness.hooks.hold()
        try harness.advance(10)
        #expect(harness.state?.primary == "eth0")
        #expect(harness.hooks.events.contains { $0.kind == .primary })
        // The hook puts its entries in place while it runs.
        harness.links.changeRouting { applyHook($0) }
        harness.hooks.finish()
        // Nothing changed behind the agent's back: no repair, however long.
        try harness.advance(RouteGuard.firstDelayMilliseconds * 5)
        #expect(!harness.hooks.events.contains { $0.kind == .repair })
        // Then someone deletes the first rule.
        harness.links.changeRouting { $0.rules.removeFirst() }
        try harness.advance(RouteGuard.firstDelayMilliseconds - 1)
        #expect(harness.hooks.events.last?.kind != .repair)
        try harness.advance(1)
        let repair = try #require(harness.hooks.events.last)
        #expect(repair.kind == .repair)
        #expect(repair.primary == "eth0" && repair.familyPrimaries[.ipv4] == "eth0")
        #expect(repair.environment.contains("UPLINK_ROUTE_TABLE=7077"))
        // The repair is done (the fake's hooks finish at once) and nothing else changed:
        // no second one.
        try harness.advance(5_000)
        #expect(harness.hooks.events.filter { $0.kind == .repair }.count == 1)
    }

    @Test func changesTheHooksMakeAreNoRepair() throws {
        let harness = try harness()
        try harness.agent.start()
        harness.hooks.hold()
        try harness.advance(10)
        #expect(harness.hooks.pendingEvents == 1)
        // The hook adds its entries while it runs: not someone else's change.
        harness.links.changeRouting { applyHook($0) }
        harness.hooks.finish()
        try harness.advance(5_000)
        #expect(!harness.hooks.events.contains { $0.kind == .repair })
    }

    @Test func aChangeWhileOnlyVerdictHooksRunIsSomeoneElses() throws {
        let harness = try harness()
        try harness.agent.start()
        harness.hooks.hold()
        try harness.advance(10)
        harness.links.changeRouting { applyHook($0) }
        harness.hooks.finish()
        try harness.advance(1)
        // wwan0 loses its carrier: a verdict event, no primary change. While its
        // hooks run, another tool deletes a rule; the route hook ignores verdict
        // events, so the deletion is not the hooks' doing.
        harness.hooks.hold()
        harness.links.set([usableLink("eth0", index: 2), usableLink("wwan0", index: 3, carrier: false)])
        #expect(harness.hooks.events.last?.kind == .verdict)
        harness.links.changeRouting { $0.rules.removeFirst() }
        harness.hooks.finish()
        try harness.advance(RouteGuard.firstDelayMilliseconds)
        #expect(harness.hooks.events.last?.kind == .repair)
    }
}
