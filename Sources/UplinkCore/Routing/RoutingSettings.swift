/// Where uplinkd keeps its routing state (`[agent] route-table`, `rule-priority`,
/// `route-protocol`, `keep-routes-on-stop`): a table of its own holding each family's
/// primary default route, two rules in front of the main table, and the protocol id
/// that marks its rules and routes as its own. The route-failover hook gets these in
/// its environment; the agent watches, repairs and removes what they name.
package struct RoutingSettings: Sendable, Equatable {
    /// Far from the tables other tools number from 1 (mwan3, iproute2's rt_tables),
    /// Tailscale's 52 and wg-quick's 51820.
    package var table = 7_077
    /// The first of uplinkd's two rules (`lookup main suppress_prefixlength 0`); the
    /// second (`lookup TABLE`) is the next priority. Just in front of the main table
    /// (32766), behind every other tool's rules: rules added without a priority land
    /// in front of the first rule after `local`, so in front of these too.
    package var rulePriority = 32_500
    /// RTPROT_* id marking uplinkd's rules and routes; 77 is unassigned in iproute2's
    /// rt_protos.
    package var protocolNumber = 77
    /// Leave the rules and the table in place when the agent stops.
    package var keepOnStop = false

    package init() {}

    /// The largest first priority: both rules stay in front of the main table's rule
    /// (32766), and the second never takes 32765, where rules added without a priority
    /// land on a system with no other rules.
    package static let highestRulePriority = 32_764
    /// Tables the kernel reserves: unspec, default, main, local.
    package static let reservedTables: Set<Int> = [0, 253, 254, 255]

    /// A route that is uplinkd's own: in its table, or of its protocol anywhere (the
    /// metric-10 copies of the main table that hooks before 0.3 added).
    package func owns(_ route: OwnedRoute) -> Bool {
        route.table == table || route.protocolNumber == protocolNumber
    }

    /// A default route that is uplinkd's own, never the uplink's.
    package func owns(_ route: DefaultRoute) -> Bool {
        route.table == table || route.protocolNumber == protocolNumber
    }

    package func owns(_ rule: RoutingRule) -> Bool {
        rule.protocolNumber == protocolNumber
    }

    /// The ones only a restart changes: the running agent must clean up what it made.
    package func sameEntries(as other: RoutingSettings) -> Bool {
        table == other.table && rulePriority == other.rulePriority && protocolNumber == other.protocolNumber
    }

    /// For the hooks (the route-failover hook builds its rules and table from these).
    package var environment: [String] {
        [
            "UPLINK_ROUTE_TABLE=\(table)",
            "UPLINK_RULE_PRIORITY=\(rulePriority)",
            "UPLINK_ROUTE_PROTOCOL=\(protocolNumber)",
            "UPLINK_KEEP_ROUTES=\(keepOnStop ? "yes" : "no")",
        ]
    }
}
