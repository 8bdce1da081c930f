import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd status [--json | --get [IFACE] FACT] [--state FILE]`: reads the state file
/// (either format), with or without a running agent, and says how old it is; the exit
/// status tells scripts whether the agent runs and has a primary
/// (`AgentState.statusExitCode`). `--get` prints one fact's value instead, exit 0.
enum StatusCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var json = false
        var get: [String] = []
        var path = AgentPolicy().stateFilePath
        let early = ArgumentReader.readOptions(arguments, for: "status") { option, inline, reader throws(UsageError) in
            switch option {
            case "--json": json = true
            case "--state": path = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--get":
                guard get.isEmpty else { throw UsageError("--get given twice") }
                get.append(try reader.value(for: option, inline: inline))
            default:
                // The FACT after `--get IFACE`.
                guard get.count == 1, !option.hasPrefix("-") else { return false }
                get.append(option)
            }
            return true
        }
        if let early { return early }
        if json && !get.isEmpty { return usageFailure("status: --json and --get exclude each other") }
        let query: FactQuery?
        do throws(UsageError) {
            query = get.isEmpty ? nil : try FactQuery(get)
        } catch {
            return usageFailure(error.message)
        }
        guard let state = readStateOrReport(path) else { return ExitStatus.unavailable }
        if let query {
            guard let value = query.value(in: state) else {
                if case .uplink(let name, _) = query { printError("status: \(name.value) is not among the uplinks in \(path)") }
                return 1
            }
            print(value)
            return 0
        }
        let now = Int(time(nil))
        let age = max(0, now - state.writtenWallSeconds)
        let running = state.writtenByRunningAgent(processExists: ProcessTable.exists)
        if json {
            print(state.statusJSON(ageSeconds: age, running: running).serialized())
        } else {
            print("primary: \(state.primary?.value ?? "none")\(familyNote(state))")
            print("written \(age) s ago by pid \(state.pid) (\(running ? "running" : "not running"))")
            for uplink in state.uplinks { print(line(for: uplink, nowWallSeconds: now)) }
        }
        return state.statusExitCode(agentRunning: running)
    }

    /// `--get [IFACE] FACT`: one fact of the node or of an uplink, named as in the state
    /// file (`StateFacts`), found once when the arguments are read.
    enum FactQuery {
        case node(Fact<AgentState>)
        /// A nil fact is `interface`, the uplink's own name.
        case uplink(InterfaceName, Fact<UplinkStatus>?)

        init(_ words: [String]) throws(UsageError) {
            let name = words.last!
            let nodeNames = StateFacts.node.map(\.name)
            let uplinkNames = ["interface"] + StateFacts.uplink.map(\.name)
            guard words.count == 2 else {
                guard let fact = StateFacts.nodeByName[name] else {
                    if uplinkNames.contains(name) {
                        throw UsageError("status --get: \(name.printableEscaped) is a fact of each uplink: --get IFACE \(name.printableEscaped)")
                    }
                    throw UsageError("status --get: no node fact '\(name.printableEscaped)'; known: \(nodeNames.joined(separator: ", "))")
                }
                self = .node(fact)
                return
            }
            if let problem = InterfaceName.problem(with: words[0]) { throw UsageError("status --get: \(problem)") }
            guard uplinkNames.contains(name) else {
                throw UsageError("status --get: no uplink fact '\(name.printableEscaped)'; known: \(uplinkNames.joined(separator: ", "))")
            }
            self = .uplink(InterfaceName(words[0])!, StateFacts.uplinkByName[name])
        }

        /// The value as hooks see it (empty for none); nil when the uplink is not in the state.
        func value(in state: AgentState) -> String? {
            switch self {
            case .node(let fact):
                return fact.value(state).environmentText
            case .uplink(let name, let fact):
                guard let uplink = state.uplinks.first(where: { $0.interface == name }) else { return nil }
                return fact.map { $0.value(uplink).environmentText } ?? name.value
            }
        }
    }

    /// One line per uplink, so `grep wlan0` shows all that is known of it.
    private static func line(for uplink: UplinkStatus, nowWallSeconds now: Int) -> String {
        var line = "\(uplink.interface): \(uplink.verdict.rawValue) (\(uplink.kind.rawValue), \(uplink.reason.rawValue)) since \(max(0, now - uplink.sinceWallSeconds)) s ago"
        if let portal = uplink.portalURL { line += ", portal \(portal)" }
        if let left = uplink.session.secondsRemaining(atWallSeconds: now) { line += ", session ends in \(left) s" }
        if let bytes = uplink.session.bytesRemaining { line += ", session has \(bytes) bytes left" }
        if let v4 = uplink.ipv4, let v6 = uplink.ipv6 {
            line += ", ipv4 \(v4.rawValue) (\(uplink.ipv4Reason?.rawValue ?? "-")), ipv6 \(v6.rawValue) (\(uplink.ipv6Reason?.rawValue ?? "-"))"
        }
        if let source = uplink.dnsSource {
            line += ", dns from \(source.rawValue)" + (source.isPerUplink ? "" : " (not per-uplink)")
        }
        line += uplink.metered ? ", metered" : ""
        line += qualityText(uplink.quality)
        if let modem = uplink.modem { line += ", " + modem.summary }
        if uplink.standby != (uplink.metered ? .warm : .hot) { line += ", standby \(uplink.standby.rawValue)" }
        if let plan = uplink.plan {
            line += ", plan \(PlanCommand.size(plan.usedBytes))"
                + (plan.limitBytes.map { " of \(PlanCommand.size($0)) (\(plan.percent ?? 0) %)" } ?? " (no limit)")
                + (plan.capped ? " used up (at-cap \(plan.atCap.rawValue))" : "")
        }
        line += ", \(uplink.bytesToday) probe bytes today"
        if let budget = uplink.budgetBytes {
            line += " of \(budget)" + (uplink.budgetExhausted ? " (budget spent: probing on link events only)" : "")
        }
        return line
    }

    /// Quality figures appear only once measured, and damping only while it counts,
    /// so a healthy uplink's line stays short.
    private static func qualityText(_ quality: UplinkQualityStatus) -> String {
        var text = ""
        if let rtt = quality.figures.roundTripMilliseconds {
            text += ", rtt \(rtt) ms ± \(quality.figures.roundTripVariationMilliseconds ?? 0)"
        }
        if let loss = quality.figures.lossPercent { text += ", loss \(loss) %" }
        if quality.degraded { text += " (degraded)" }
        if quality.flapPenalty > 0 {
            text += ", flap penalty \(quality.flapPenalty)" + (quality.suppressed ? " (suppressed)" : "")
        }
        return text
    }

    /// " (IPv6: wlan0)" when a family's primary is another uplink than the primary
    /// (none for a family is normal: an IPv4-only network); nothing otherwise.
    static func familyNote(_ state: AgentState) -> String {
        let differing = AddressFamily.allCases.compactMap { family -> String? in
            let name = state.familyPrimaries[family]
            guard let name, name != state.primary else { return nil }
            return "\(family == .ipv4 ? "IPv4" : "IPv6"): \(name)"
        }
        return differing.isEmpty ? "" : " (\(differing.joined(separator: ", ")))"
    }
}
