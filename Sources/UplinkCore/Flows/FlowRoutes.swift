/// The policy routing a flow plan needs, per family: a rule that lets the main table's
/// routes other than defaults win (the LAN and connected networks), then one rule per
/// uplink slot sending packets of its mark to its table, and in each table a copy of
/// that uplink's own default route. The agent compares this with what the kernel has
/// and changes only the difference (`commands(from:)`), so a pinned connection never
/// meets a moment without its rule or route.
package struct FlowRoutes: Sendable, Equatable {
    package var rules: [RoutingRule]
    package var routes: [OwnedRoute]

    /// What `plan` needs, with each member's default routes from `links` (the main
    /// table's, never uplinkd's own copies).
    package init(plan: FlowPlan, settings: FlowSettings, links: [LinkFacts]) {
        var rules: [RoutingRule] = []
        var routes: [OwnedRoute] = []
        for family in AddressFamily.allCases {
            guard !plan.members.isEmpty else { break }
            rules.append(RoutingRule(family: family, priority: settings.rulePriority, table: 254,
                                     protocolNumber: settings.protocolNumber, suppressPrefixLength: 0))
            for member in plan.members {
                rules.append(RoutingRule(family: family, priority: settings.rulePriority(ofSlot: member.slot),
                                         table: settings.table(ofSlot: member.slot), protocolNumber: settings.protocolNumber,
                                         fwmark: member.mark, fwmask: FlowSettings.markMask))
                guard let facts = links.first(where: { $0.name == member.name }),
                      let own = facts.defaultRoutes.filter({ $0.family == family && $0.table == 254 }).min(by: { $0.metric < $1.metric })
                else { continue }
                routes.append(OwnedRoute(family: family, destination: "default", gateway: own.gateway,
                                         interfaceIndex: facts.index, interfaceName: member.name.value,
                                         table: settings.table(ofSlot: member.slot), metric: 0,
                                         protocolNumber: settings.protocolNumber))
            }
        }
        self.rules = rules.sorted()
        self.routes = routes.sorted()
    }

    /// `ip -batch` lines per family that turn `current` (the kernel's rules and routes
    /// of the flow protocol) into these: routes replaced in place, rules added before
    /// the extra ones go. Empty when nothing differs. A batch has one family switch
    /// for all its lines (`ip -4`, `ip -6`), so each family has its own.
    package func commands(from current: (rules: [RoutingRule], routes: [OwnedRoute])) -> [AddressFamily: [String]] {
        var lines: [AddressFamily: [String]] = [:]
        let currentRoutes = Set(current.routes.map(FlowRoutes.routeKey))
        for route in routes where !currentRoutes.contains(FlowRoutes.routeKey(route)) {
            lines[route.family, default: []].append("route replace \(FlowRoutes.routeText(route))")
        }
        // A replaced route took its place: only a destination no longer wanted in a
        // table goes.
        let replaced = Set(routes.map { "\($0.family) \($0.destination) \($0.table)" })
        for route in current.routes where !replaced.contains("\(route.family) \(route.destination) \(route.table)") {
            lines[route.family, default: []].append("route del \(route.destination) table \(route.table)"
                                                    + (route.interfaceName.map { " dev \($0)" } ?? ""))
        }
        let currentRules = Set(current.rules.map(FlowRoutes.ruleKey))
        for rule in rules where !currentRules.contains(FlowRoutes.ruleKey(rule)) {
            lines[rule.family, default: []].append("rule add \(FlowRoutes.ruleText(rule))")
        }
        let wantedRules = Set(rules.map(FlowRoutes.ruleKey))
        for rule in current.rules where !wantedRules.contains(FlowRoutes.ruleKey(rule)) {
            lines[rule.family, default: []].append("rule del \(FlowRoutes.ruleText(rule))")
        }
        return lines
    }

    private static func routeKey(_ route: OwnedRoute) -> String {
        "\(route.family) \(route.destination) \(route.gateway.map { "\($0)" } ?? "-") \(route.interfaceIndex) \(route.table)"
    }

    private static func routeText(_ route: OwnedRoute) -> String {
        var text = route.destination
        if let gateway = route.gateway { text += " via \(gateway)" }
        return text + " dev \(route.interfaceName ?? "") table \(route.table) proto \(route.protocolNumber)"
    }

    private static func ruleKey(_ rule: RoutingRule) -> String { "\(rule.family) \(ruleText(rule))" }

    private static func ruleText(_ rule: RoutingRule) -> String {
        var text = "pref \(rule.priority)"
        if let mark = rule.fwmark { text += " fwmark \(FlowRuleset.hex(mark))/\(FlowRuleset.hex(rule.fwmask ?? UInt32.max))" }
        text += " lookup \(rule.table)"
        if let suppress = rule.suppressPrefixLength { text += " suppress_prefixlength \(suppress)" }
        return text + " proto \(rule.protocolNumber)"
    }
}

extension FlowSettings {
    /// The flow entries as the agent's routing code owns entries: by protocol alone
    /// (table 0 holds no route), to read and to remove them at start and stop.
    package var ownership: RoutingSettings {
        var settings = RoutingSettings()
        settings.table = 0
        settings.protocolNumber = protocolNumber
        return settings
    }
}
