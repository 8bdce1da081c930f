// A program that embeds uplinkd, written only against the public API (README,
// "Embedding"). check.sh type-checks it against the built modules from outside the
// package, so `package` declarations are out of its reach: if it stops compiling, the
// public surface lost something an embedding program needs.
import UplinkCore
import UplinkLinux
import UplinkMonitor

func describe(_ state: AgentState) -> [String] {
    var lines = ["primary \(state.primary?.value ?? "none"), written \(state.writtenWallSeconds)"]
    for family in AddressFamily.allCases {
        if let primary = state.familyPrimaries[family] { lines.append("\(family.rawValue) primary \(primary)") }
    }
    for uplink in state.uplinks {
        let portal = uplink.portalURL.map { " portal \($0)" } ?? ""
        lines.append("\(uplink.interface) (\(uplink.kind.rawValue)): \(uplink.verdict.rawValue) \(uplink.reason.rawValue)"
                     + " since \(uplink.sinceWallSeconds)\(portal) metered \(uplink.metered)")
        if let ipv4 = uplink.ipv4, let reason = uplink.ipv4Reason { lines.append("  ipv4 \(ipv4.rawValue) \(reason.rawValue)") }
        if let ipv6 = uplink.ipv6, let reason = uplink.ipv6Reason { lines.append("  ipv6 \(ipv6.rawValue) \(reason.rawValue)") }
    }
    lines.append(state.summaryLine + (state.isSettled ? "" : " (starting)"))
    lines.append(state.json.serialized())
    return lines
}

func describe(_ event: HookEvent) -> String {
    switch event.kind {
    case .verdict:
        return "\(event.interface?.value ?? "-") (\(event.interfaceKind.rawValue)): \(event.previousVerdict.rawValue) -> \(event.verdict.rawValue) (\(event.reason.rawValue)) \(event.portalURL ?? "")"
    case .primary:
        return "primary \(event.previousPrimary?.value ?? "none") -> \(event.primary?.value ?? "none") at \(event.wallSeconds)"
    default:
        return event.kind.rawValue
    }
}

func describe(_ report: RoundReport) -> String {
    let families = report.families.map { "\($0.key.rawValue) \($0.value.verdict.rawValue)" }.sorted()
    let worst = report.assessment.verdict < .online ? " exit \(report.assessment.verdict.exitStatus)" : ""
    return "\(report.humanLine) [\(families.joined(separator: ", "))] \(report.elapsedMilliseconds) ms\(worst) "
        + report.json.serialized()
}

func configuration(path: String?) -> Configuration? {
    let loader = ConfigurationLoader(explicitPath: path)
    do {
        return try loader.load()
    } catch {
        print("\(loader.path): \(error.file):\(error.line ?? 0): \(error.key ?? "-"): \(error.message)")
        return nil
    }
}

func inline() throws(ConfigurationError) -> Configuration {
    try ConfigurationParser(fileName: "inline").parse("[uplinks]\ninterfaces = eth0 wwan0\n")
}

func watch(_ configuration: Configuration) async throws {
    let monitor = UplinkMonitor(configuration: configuration, loader: ConfigurationLoader(explicitPath: nil))
    try monitor.start()
    if let state = monitor.current { describe(state).forEach { print($0) } }
    if monitor.verdict(for: .wifi) == .captive || monitor.isConnectedWithoutInternet(via: .wwan) { print("look") }
    for await change in monitor.changes {
        describe(change.state).forEach { print($0) }
        change.events.map(describe).forEach { print($0) }
        break
    }
    monitor.reload()
    monitor.reload(configuration: Configuration())
    guard let wwan0 = InterfaceName("wwan0") else { return }
    for report in try await UplinkMonitor.check([wwan0], configuration: configuration) { print(describe(report)) }
    monitor.stop()
}
