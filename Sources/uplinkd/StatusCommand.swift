import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd status [--json] [--state FILE]`: reads the state file, with or without a
/// running agent, and says how old it is; the exit status tells scripts whether the
/// agent runs and has a primary (`AgentState.statusExitCode`).
enum StatusCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var json = false
        var path = AgentPolicy().stateFilePath
        let early = ArgumentReader.readOptions(arguments, for: "status") { option, inline, reader throws(UsageError) in
            switch option {
            case "--json": json = true
            case "--state": path = try pathValue(option, try reader.value(for: option, inline: inline))
            default: return false
            }
            return true
        }
        if let early { return early }
        guard let state = readStateOrReport(path) else { return ExitStatus.unavailable }
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
