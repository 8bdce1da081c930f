/// A flow plan as the nftables script that makes it true: one table of uplinkd's own,
/// `inet uplinkd`, replaced whole in one transaction (`nft -f -`), so no packet ever
/// meets half of an old and half of a new ruleset.
///
/// The packet mark picks the routing rule, hence the uplink's table; the connection
/// mark remembers the uplink. A connection's mark is recorded from the interface its
/// first packet really left by (postrouting), or came in by (a connection opened from
/// the internet, so its answers leave where it came in), never from the choice made
/// for it: what the routing did is what the mark says. Uplinks are matched by
/// interface index, so no interface name is ever put into the script.
package enum FlowRuleset {
    package static let tableName = "uplinkd"
    /// The seed of the per-host hash.
    static let hostSeed: UInt32 = 0x7570_6c6b

    /// The script for `plan`: deletes the table if it exists and makes it anew.
    package static func script(_ plan: FlowPlan) -> String {
        var lines = ["table inet \(tableName)", "delete table inet \(tableName)", "table inet \(tableName) {"]
        lines += chain("prerouting", hook: "type filter hook prerouting priority mangle; policy accept;", prerouting(plan))
        lines += chain("output", hook: "type route hook output priority mangle; policy accept;", output(plan))
        lines += chain("postrouting", hook: "type filter hook postrouting priority mangle; policy accept;", postrouting(plan))
        for member in plan.members {
            lines += chain("mark_\(member.slot)", hook: nil, ["meta mark set meta mark and \(hex(~FlowSettings.markMask)) or \(hex(member.mark))"])
            lines += chain("record_\(member.slot)", hook: nil, ["ct mark set ct mark and \(hex(~FlowSettings.markMask)) or \(hex(member.mark))"])
        }
        lines += chain("spread", hook: nil, choose(plan.spread, sticky: plan.sticky, emptyAction: "return"))
        for (number, choice) in plan.classes.enumerated() {
            lines += chain("class_\(number + 1)", hook: nil, choose(choice.shares, sticky: plan.sticky, emptyAction: "drop"))
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every packet of a pinned connection takes its uplink's mark again, while that
    /// uplink keeps its connections; the mark of one that does not is forgotten (its
    /// entries are being released). A new connection from the LAN takes a class's
    /// choice or the spread.
    private static func prerouting(_ plan: FlowPlan) -> [String] {
        var rules = restore(plan)
        let uplinks = plan.members.map { String($0.interfaceIndex) }
        if !uplinks.isEmpty {
            rules.append("ct state new ct mark and \(hex(FlowSettings.markMask)) == 0 iif vmap { "
                         + plan.members.map { "\($0.interfaceIndex) : goto record_\($0.slot)" }.joined(separator: ", ") + " }")
        }
        rules.append("ct direction reply return")
        rules.append("ct state != new return")
        rules.append("meta mark and \(hex(FlowSettings.markMask)) != 0 return")
        if !uplinks.isEmpty { rules.append("iif { \(uplinks.joined(separator: ", ")) } return") }
        for (number, choice) in plan.classes.enumerated() {
            rules += matches(choice.flowClass).map { "\($0) goto class_\(number + 1)" }
        }
        rules.append("goto spread")
        return rules
    }

    /// The gateway's own connections keep their uplink too; a new one is routed as
    /// the socket asked (bound to a device, or by the routing tables).
    private static func output(_ plan: FlowPlan) -> [String] {
        restore(plan)
    }

    private static func postrouting(_ plan: FlowPlan) -> [String] {
        guard !plan.members.isEmpty else { return [] }
        return ["ct mark and \(hex(FlowSettings.markMask)) != 0 return",
                "oif vmap { " + plan.members.map { "\($0.interfaceIndex) : goto record_\($0.slot)" }.joined(separator: ", ") + " }"]
    }

    private static func restore(_ plan: FlowPlan) -> [String] {
        let keeping = plan.members.filter(\.keeping)
        var rules: [String] = []
        if !keeping.isEmpty {
            rules.append("meta mark and \(hex(FlowSettings.markMask)) == 0 ct mark and \(hex(FlowSettings.markMask)) vmap { "
                         + keeping.map { "\(hex($0.mark)) : goto mark_\($0.slot)" }.joined(separator: ", ") + " }")
        }
        rules.append("ct mark and \(hex(FlowSettings.markMask)) != 0 ct mark set ct mark and \(hex(~FlowSettings.markMask))")
        return rules
    }

    /// Shares by weight: at random per connection, or by a hash of the source
    /// address per host.
    private static func choose(_ shares: [FlowPlan.Share], sticky: FlowStickiness, emptyAction: String) -> [String] {
        guard let first = shares.first else { return [emptyAction] }
        guard shares.count > 1 else { return ["goto mark_\(first.slot)"] }
        var entries: [String] = []
        var low = 0
        for share in shares {
            let high = low + share.weight - 1
            entries.append((low == high ? "\(low)" : "\(low)-\(high)") + " : goto mark_\(share.slot)")
            low = high + 1
        }
        let map = "vmap { \(entries.joined(separator: ", ")) }"
        switch sticky {
        case .flow:
            return ["numgen random mod \(low) \(map)"]
        case .host:
            // A fixed seed: nft would pick a random one each time the table is made,
            // and every plan change (or the table put back) would move LAN hosts.
            let hash = "mod \(low) seed \(hex(hostSeed)) \(map)"
            return ["meta nfproto ipv4 jhash ip saddr \(hash)", "meta nfproto ipv6 jhash ip6 saddr \(hash)"]
        }
    }

    /// The matches of a class, one per address family it names (or one for both).
    private static func matches(_ flowClass: FlowClass) -> [String] {
        var ports = ""
        if let transport = flowClass.transport {
            ports = "meta l4proto \(transport.rawValue)"
            if !flowClass.ports.isEmpty {
                ports += " th dport { " + flowClass.ports.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
                    .joined(separator: ", ") + " }"
            }
        }
        guard !flowClass.destinations.isEmpty else { return [ports] }
        return AddressFamily.allCases.compactMap { family in
            let prefixes = flowClass.destinations.filter { $0.address.family == family }
            guard !prefixes.isEmpty else { return nil }
            let address = family == .ipv4 ? "ip daddr" : "ip6 daddr"
            let match = "\(address) { \(prefixes.map(\.description).joined(separator: ", ")) }"
            return ports.isEmpty ? match : "\(match) \(ports)"
        }
    }

    private static func chain(_ name: String, hook: String?, _ rules: [String]) -> [String] {
        ["\tchain \(name) {"] + (hook.map { ["\t\t\($0)"] } ?? []) + rules.map { "\t\t\($0)" } + ["\t}"]
    }

    package static func hex(_ value: UInt32) -> String {
        "0x" + String(value, radix: 16)
    }
}
