import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd plan [IFACE] [--reset] [--json] [--state FILE] [--config FILE]`: the data
/// plans as the running agent's state file shows them, or a new cycle started by hand
/// (`--reset IFACE`, when the carrier's cycle differs): the running agent takes it on
/// SIGUSR1 from a request file beside the plan file, and the command waits until the
/// state file shows it; without a running agent the plan file itself is changed, and
/// the agent takes it at its start. Exit 0; 1 when the uplink (or every uplink) has no
/// plan; 64 usage; 69 no readable state file, or the reset could not be made or was not
/// taken; 78 configuration error.
enum PlanCommand {
    /// How long `--reset` waits for the running agent to show the new cycle.
    static let resetWaitMilliseconds = 10_000

    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var json = false
        var reset = false
        var interface: InterfaceName?
        var statePath = AgentPolicy().stateFilePath
        var configPath: String?
        let early = ArgumentReader.readOptions(arguments, for: "plan") { option, inline, reader throws(UsageError) in
            switch option {
            case "--json": json = true
            case "--reset": reset = true
            case "--state": statePath = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--config": configPath = try reader.value(for: option, inline: inline)
            default:
                guard let name = try interfaceOperand(option, given: interface) else { return false }
                interface = name
            }
            return true
        }
        if let early { return early }
        if reset {
            guard let interface else { return usageFailure("plan --reset needs the interface whose plan starts a new cycle") }
            return resetPlan(interface, statePath: statePath, configPath: configPath)
        }
        return show(interface, statePath: statePath, json: json)
    }

    private static func show(_ interface: InterfaceName?, statePath: String, json: Bool) -> Int32 {
        guard let state = readStateOrReport(statePath) else { return ExitStatus.unavailable }
        let uplinks = state.uplinks.filter { interface == nil || $0.interface == interface }
        let planned = uplinks.filter { $0.plan != nil }
        if json {
            print(JSONValue.object([("plans", .array(planned.map { uplink in
                guard case .object(let members) = uplink.plan!.json else { return .null }
                return .object([("interface", .string(uplink.interface.value))] + members)
            }))]).serialized())
        } else {
            let now = Int(time(nil))
            for uplink in planned { print("\(uplink.interface): \(describe(uplink.plan!, now: now))") }
            if let interface, planned.isEmpty {
                print(uplinks.isEmpty ? "\(interface): not an uplink the agent knows" : "\(interface): no data plan (plan = off)")
            } else if planned.isEmpty {
                print("no uplink has a data plan (set plan = SIZE in [interface NAME] or [kind KIND])")
            }
        }
        return planned.isEmpty ? 1 : 0
    }

    /// "1.23 GB of 5.00 GB used (24 %): 0.98 GB received, 0.25 GB sent; cycle from
    /// 2025-06-12 00:00 to 2025-07-12 00:00 (local time), ends in 18 d 3 h".
    static func describe(_ plan: PlanStatus, now: Int) -> String {
        var text = size(plan.usedBytes)
        if let limit = plan.limitBytes {
            text += " of \(size(limit)) used (\(plan.percent ?? 0) %)"
        } else {
            text += " used (no limit)"
        }
        text += ": \(size(plan.received)) received, \(size(plan.sent)) sent; cycle from \(localTime(plan.cycleStartWallSeconds))"
            + " to \(localTime(plan.cycleEndWallSeconds)) (local time), ends in \(span(plan.cycleEndWallSeconds - now))"
        if plan.capped {
            switch plan.atCap {
            case .lastResort: text += "; used up: primary only while no other uplink is online (at-cap last-resort)"
            case .down: text += "; used up: never primary until the next cycle (at-cap down)"
            case .keep: text += "; used up: used as before (at-cap keep)"
            }
        }
        return text
    }

    /// A data volume in decimal units, as carriers sell them.
    static func size(_ bytes: Int) -> String {
        let units: [(Int, String)] = [(1_000_000_000_000, "TB"), (1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB")]
        guard let (scale, unit) = units.first(where: { bytes >= $0.0 }) else { return "\(bytes) B" }
        return "\(PrometheusText.decimal(bytes / (scale / 100), scale: 2)) \(unit)"
    }

    private static func span(_ seconds: Int) -> String {
        guard seconds > 0 else { return "0 s" }
        if seconds >= 86_400 { return "\(seconds / 86_400) d \(seconds % 86_400 / 3_600) h" }
        if seconds >= 3_600 { return "\(seconds / 3_600) h \(seconds % 3_600 / 60) min" }
        return seconds >= 60 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    private static func localTime(_ epochSeconds: Int) -> String {
        var time = time_t(epochSeconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return String(epochSeconds) }
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func resetPlan(_ name: InterfaceName, statePath: String, configPath: String?) -> Int32 {
        guard let configuration = loadConfigurationOrReport(explicitPath: configPath) else { return ExitStatus.configuration }
        let store = PlanStore(path: configuration.agent.plans.path)
        let state = try? StateFileReader.read(statePath)
        guard let state, state.writtenByRunningAgent(processExists: ProcessTable.isUplinkd) else {
            // No agent to ask: the configuration says whether the uplink has a plan.
            let kind = SysfsKindReader().kind(of: name, configured: configuration.configuredKind(of: name))
            guard [false, true].contains(where: { configuration.probingSettings(for: name, kind: kind, metered: $0).metering.plan != nil })
            else {
                printError("plan --reset: \(name) has no data plan in the configuration")
                return 1
            }
            return resetFile(name, store: store)
        }
        guard state.uplinks.first(where: { $0.interface == name })?.plan != nil else {
            printError("plan --reset: \(name) has no data plan in the running agent")
            return 1
        }
        let asked = Int(time(nil))
        do {
            try PlanStore.request(reset: name, at: store.requestPath)
        } catch {
            printError("plan --reset: cannot write \(store.requestPath): \(error)")
            return ExitStatus.unavailable
        }
        guard kill(pid_t(state.pid), SIGUSR1) == 0 else {
            printError("plan --reset: cannot signal the agent (pid \(state.pid)): \(SystemError("kill"))")
            return ExitStatus.unavailable
        }
        // The agent shows the new cycle in its state file: wait for exactly that.
        var waited = 0
        while waited < resetWaitMilliseconds {
            if let now = try? StateFileReader.read(statePath),
               let plan = now.uplinks.first(where: { $0.interface == name })?.plan, plan.cycleStartWallSeconds >= asked {
                print("\(name): a new cycle from now: \(describe(plan, now: Int(time(nil))))")
                return 0
            }
            usleep(50_000)
            waited += 50
        }
        printError("plan --reset: the agent (pid \(state.pid)) did not show a new cycle for \(name) within \(resetWaitMilliseconds / 1_000) s")
        return ExitStatus.unavailable
    }

    /// No agent runs: the plan file itself gets the new cycle (its end is worked out by
    /// the agent from its settings when it starts).
    private static func resetFile(_ name: InterfaceName, store: PlanStore) -> Int32 {
        var ledgers = store.load()
        var ledger = ledgers[name] ?? PlanLedger(cycleStartWallSeconds: 0)
        let now = Int(time(nil))
        ledger.cycleStartWallSeconds = now
        ledger.used = ByteCounts()
        ledger.marksTold = []
        ledgers[name] = ledger
        do {
            try store.write(ledgers, wallSeconds: now)
        } catch {
            printError("plan --reset: cannot write \(store.path): \(error)")
            return ExitStatus.unavailable
        }
        print("\(name): a new cycle from now (the agent is not running: it takes the plan file at its start)")
        return 0
    }
}
