import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd routes [--remove] [--config FILE]`: lists uplinkd's own routing entries
/// (the rules and table the route-failover hook keeps, as the configuration names
/// them), or deletes them: for an admin who keeps them across a stop
/// (`keep-routes-on-stop`), and for the package's removal. Exit 0, 69 when the kernel
/// refused (not root), 78 for a bad configuration.
enum RoutesCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var configPath: String?
        var remove = false
        let early = ArgumentReader.readOptions(arguments, for: "routes") { option, inline, reader throws(UsageError) in
            switch option {
            case "--config": configPath = try reader.value(for: option, inline: inline)
            case "--remove": remove = true
            default: return false
            }
            return true
        }
        if let early { return early }
        guard let configuration = loadConfigurationOrReport(explicitPath: configPath) else {
            return ExitStatus.configuration
        }
        let settings = configuration.agent.routing
        let flows = configuration.flows
        do {
            if remove {
                let removed = try RoutingEntries.remove(ownedBy: settings) + RoutingEntries.remove(ownedBy: flows.ownership)
                for entry in removed { print("removed \(entry)") }
                if FlowTools.removeTable() { print("removed nftables table inet \(FlowRuleset.tableName)") }
                if removed.isEmpty { print("nothing to remove: no rule of protocol \(settings.protocolNumber) or \(flows.protocolNumber), table \(settings.table) empty") }
                return 0
            }
            let entries = try RoutingEntries.read(ownedBy: settings)
            print("# table \(settings.table), rules \(settings.rulePriority) and \(settings.rulePriority + 1), protocol \(settings.protocolNumber)")
            for rule in entries.rules { print(rule) }
            for route in entries.routes { print(route) }
            printFlows(flows, try RoutingEntries.read(ownedBy: flows.ownership))
            return 0
        } catch {
            printError("routes: \(error)")
            return ExitStatus.unavailable
        }
    }

    /// The flow entries, the nftables table, and the connections pinned to each uplink
    /// (the uplink a table's route goes through names the slot).
    private static func printFlows(_ flows: FlowSettings, _ entries: (rules: [RoutingRule], routes: [OwnedRoute])) {
        let table = FlowTools.tableExists
        guard flows.pinning || table || !entries.rules.isEmpty else { return }
        print("# flows: marks 0x\(String(FlowSettings.markMask, radix: 16)), tables \(flows.tableBase)+N, rules \(flows.rulePriority)+N, "
              + "protocol \(flows.protocolNumber); nftables table inet \(FlowRuleset.tableName) \(table ? "present" : "absent")")
        for rule in entries.rules { print(rule) }
        for route in entries.routes { print(route) }
        guard let counts = FlowTools.pinnedConnections() else { return print("# pinned connections: conntrack cannot be read") }
        var names: [Int: String] = [:]
        for route in entries.routes where route.table > flows.tableBase {
            names[route.table - flows.tableBase] = route.interfaceName ?? "slot \(route.table - flows.tableBase)"
        }
        let pinned = counts.keys.sorted().map { "\(names[$0] ?? "slot \($0)") \(counts[$0]!)" }
        print("# pinned connections: " + (pinned.isEmpty ? "none" : pinned.joined(separator: ", ")))
    }
}
