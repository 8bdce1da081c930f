import Testing
import UplinkCore
import UplinkTestSupport

/// uplinkd's own routing entries: configuration, what counts as its own, and when the
/// guard asks the hooks to repair them.
@Suite("Policy routing")
struct RoutingTests {
    let settings = RoutingSettings()

    func rule(_ priority: Int, table: Int, _ family: AddressFamily = .ipv4, protocolNumber: Int = 77) -> RoutingRule {
        RoutingRule(family: family, priority: priority, table: table, protocolNumber: protocolNumber)
    }

    func tableRoute(via gateway: String, index: Int, table: Int = 7_077, protocolNumber: Int = 77) -> OwnedRoute {
        OwnedRoute(family: .ipv4, destination: "default", gateway: IPAddress(gateway), interfaceIndex: index,
                   table: table, metric: 0, protocolNumber: protocolNumber)
    }

    /// What the route-failover hook leaves with eth0 primary.
    var applied: RoutingPicture {
        RoutingPicture(settings: settings, rules: [rule(32_500, table: 254), rule(32_501, table: 7_077)],
                       routes: [tableRoute(via: "10.0.1.1", index: 1)], primaries: [.ipv4: "eth0"],
                       links: [usableLink("eth0", index: 1), usableLink("wlan0", index: 2)])
    }

    @Test func defaultsKeepClearOfOtherTools() {
        #expect(settings.table == 7_077)
        #expect(settings.rulePriority == 32_500)
        #expect(settings.protocolNumber == 77)
        #expect(settings.keepOnStop == false)
        #expect(settings.environment == ["UPLINK_ROUTE_TABLE=7077", "UPLINK_RULE_PRIORITY=32500",
                                         "UPLINK_ROUTE_PROTOCOL=77", "UPLINK_KEEP_ROUTES=no"])
    }

    @Test func configurationKeys() throws {
        let configuration = try ConfigurationParser(fileName: "a.conf").parse("""
            [agent]
            route-table = 100000
            rule-priority = 20000
            route-protocol = 99
            keep-routes-on-stop = yes
            """)
        let routing = configuration.agent.routing
        #expect(routing.table == 100_000)
        #expect(routing.rulePriority == 20_000)
        #expect(routing.protocolNumber == 99)
        #expect(routing.keepOnStop)
    }

    @Test(arguments: ["0", "253", "254", "255", "4294967296", "main", "-1"])
    func theKernelsTablesAreRefused(value: String) {
        expectError("[agent]\nroute-table = \(value)\n", line: 2, key: "route-table")
    }

    @Test(arguments: ["0", "32765", "32766", "40000"])
    func rulesMustStayInFrontOfTheMainTable(value: String) {
        expectError("[agent]\nrule-priority = \(value)\n", line: 2, key: "rule-priority")
    }

    @Test func ownRoutesAreNeverTheUplinks() {
        let facts = link("eth0", index: 1, routes: [defaultRoute(.ipv4, via: "10.0.1.1", metric: 100),
                                                    defaultRoute(.ipv4, via: "10.0.1.1", metric: 0, table: 7_077),
                                                    DefaultRoute(family: .ipv4, gateway: IPAddress("10.0.1.1"), metric: 10,
                                                                 table: 254, protocolNumber: 77)])
        #expect(facts.withoutRoutes(ownedBy: settings).defaultRoutes == [defaultRoute(.ipv4, via: "10.0.1.1", metric: 100)])
    }

    @Test func thePictureHoldsOnlyWhatIsOurs() {
        let picture = RoutingPicture(
            settings: settings,
            rules: [rule(0, table: 255, protocolNumber: 0), rule(1_000, table: 100, protocolNumber: 4),
                    rule(32_500, table: 254), rule(32_766, table: 254, protocolNumber: 0)],
            routes: [tableRoute(via: "10.0.1.1", index: 1), tableRoute(via: "10.0.2.1", index: 2, table: 100, protocolNumber: 16)],
            primaries: [.ipv4: "eth0"], links: [usableLink("eth0", index: 1)])
        #expect(picture.rules == [rule(32_500, table: 254)])
        #expect(picture.routes == [tableRoute(via: "10.0.1.1", index: 1)])
        #expect(picture.primaryRoutes == ["-4 default via 10.0.1.1 dev eth0 table 254 metric 100"])
    }

    @Test func nothingHappensBeforeStartUpIsOver() {
        var guardian = RouteGuard()
        #expect(guardian.examine(applied, hooksIdle: true) == nil)
        guardian.arm()
        // Entries with no hook run yet: left by an earlier run.
        #expect(guardian.examine(applied, hooksIdle: true) == RouteGuard.firstDelayMilliseconds)
        #expect(guardian.examine(RoutingPicture(), hooksIdle: true) == nil)
    }

    @Test func changesWhileHooksRunAreTheirs() {
        var guardian = RouteGuard()
        guardian.arm()
        guardian.hooksCaughtUp(applied)
        #expect(guardian.examine(applied, hooksIdle: true) == nil)
        #expect(guardian.examine(RoutingPicture(), hooksIdle: false) == nil)
    }

    @Test func aRuleDeletedByHandIsRepaired() {
        var guardian = RouteGuard()
        guardian.arm()
        guardian.hooksCaughtUp(applied)
        var damaged = applied
        damaged.rules.removeFirst()
        #expect(guardian.examine(damaged, hooksIdle: true) == RouteGuard.firstDelayMilliseconds)
        #expect(damaged.changes(since: applied) == "gone: -4 rule 32500: from all lookup main proto 77")
    }

    @Test func aNewGatewayOfThePrimaryIsRepaired() {
        var guardian = RouteGuard()
        guardian.arm()
        guardian.hooksCaughtUp(applied)
        var renewed = usableLink("eth0", index: 1)
        renewed.defaultRoutes = [defaultRoute(.ipv4, via: "10.0.1.254")]
        let picture = RoutingPicture(settings: settings, rules: applied.rules, routes: applied.routes,
                                     primaries: [.ipv4: "eth0"], links: [renewed])
        #expect(guardian.examine(picture, hooksIdle: true) != nil)
    }

    @Test func aToolFightingOverTheEntriesIsBackedOff() {
        var guardian = RouteGuard()
        guardian.arm()
        guardian.hooksCaughtUp(applied)
        let damaged = RoutingPicture()
        #expect(guardian.repairing(now: 1_000) == false)
        guardian.hooksCaughtUp(applied)
        // Undone again two seconds later, and again: each repair waits twice as long.
        #expect(guardian.repairing(now: 3_000) == true)
        #expect(guardian.examine(damaged, hooksIdle: true) == 400)
        #expect(guardian.repairing(now: 4_000) == true)
        #expect(guardian.examine(damaged, hooksIdle: true) == 800)
        for second in 5...30 { _ = guardian.repairing(now: second * 1_000) }
        #expect(guardian.examine(damaged, hooksIdle: true) == RouteGuard.longestDelayMilliseconds)
        // Quiet for a while: back to a quick repair.
        #expect(guardian.repairing(now: 200_000) == false)
        #expect(guardian.examine(damaged, hooksIdle: true) == RouteGuard.firstDelayMilliseconds)
    }

    @Test func hookEventsCarryTheRoutingSettings() {
        var event = HookEvent(kind: .repair, interface: "eth0", interfaceKind: .ethernet, verdict: .online,
                              previousVerdict: .online, reason: .validated, portalURL: nil, primary: "eth0",
                              previousPrimary: "eth0", wallSeconds: 0)
        event.routing.table = 100
        event.routing.keepOnStop = true
        #expect(event.environment.contains("UPLINK_EVENT=repair"))
        #expect(event.environment.contains("UPLINK_ROUTE_TABLE=100"))
        #expect(event.environment.contains("UPLINK_KEEP_ROUTES=yes"))
    }
}
