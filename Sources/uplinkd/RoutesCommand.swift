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
        do {
            if remove {
                let removed = try RoutingEntries.remove(ownedBy: settings)
                for entry in removed { print("removed \(entry)") }
                if removed.isEmpty { print("nothing to remove: no rule of protocol \(settings.protocolNumber), table \(settings.table) empty") }
                return 0
            }
            let entries = try RoutingEntries.read(ownedBy: settings)
            print("# table \(settings.table), rules \(settings.rulePriority) and \(settings.rulePriority + 1), protocol \(settings.protocolNumber)")
            for rule in entries.rules { print(ruleLine(rule)) }
            for route in entries.routes { print(routeLine(route)) }
            return 0
        } catch {
            printError("routes: \(error)")
            return ExitStatus.unavailable
        }
    }

    /// As `ip rule` would print it.
    static func ruleLine(_ rule: RoutingRule) -> String {
        "ip \(rule.family.ipFlag) rule: \(rule.priority): from all lookup \(tableName(rule.table))"
            + (rule.suppressPrefixLength.map { " suppress_prefixlength \($0)" } ?? "") + " proto \(rule.protocolNumber)"
    }

    /// As `ip route show table N` would print it, interface by name.
    static func routeLine(_ route: OwnedRoute) -> String {
        var text = "ip \(route.family.ipFlag) route: \(route.destination)"
        if let gateway = route.gateway { text += " via \(gateway)" }
        if let name = route.interfaceName {
            text += " dev \(name)"
        } else if route.interfaceIndex > 0 {
            text += " dev #\(route.interfaceIndex)"
        }
        text += " table \(tableName(route.table)) proto \(route.protocolNumber)"
        if route.metric != 0 { text += " metric \(route.metric)" }
        return text
    }

    private static func tableName(_ table: Int) -> String {
        table == 254 ? "main" : String(table)
    }
}
