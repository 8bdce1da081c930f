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
            for rule in entries.rules { print(rule) }
            for route in entries.routes { print(route) }
            return 0
        } catch {
            printError("routes: \(error)")
            return ExitStatus.unavailable
        }
    }
}
