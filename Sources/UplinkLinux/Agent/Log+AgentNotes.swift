import UplinkCore

/// How the agent words the core's notes and events in its log.
extension Log {
    static func kept(_ setting: RestartOnlySetting) {
        switch setting {
        case .stateFile(let path):
            warning("state-file changes take effect at restart; still writing \(path)")
        case .routingEntries(let routing):
            warning("route-table, rule-priority and route-protocol changes take effect at restart; "
                    + "still table \(routing.table), rules \(routing.rulePriority) and \(routing.rulePriority + 1), protocol \(routing.protocolNumber)")
        case .journal(let journal):
            warning("journal-file, journal-records and journal-heartbeat changes take effect at restart; still "
                    + "\(journal.path ?? "no journal"), \(journal.maximumRecords) records, a checkpoint every \(journal.heartbeatMilliseconds / 1000) s")
        }
    }

    static func event(_ event: HookEvent) {
        let interface = event.interface?.value ?? "-"
        switch event.kind {
        case .verdict:
            notice("\(interface): \(event.previousVerdict.rawValue) -> \(event.verdict.rawValue) (\(event.reason.rawValue))")
        case .repair:
            notice("routing: hooks re-apply the routes of primary \(event.primary?.value ?? "none")")
        case .primary, .stop:
            notice("primary: \(event.previousPrimary?.value ?? "none") -> \(event.primary?.value ?? "none") (\(event.primaryReason?.rawValue ?? "-"))")
        case .recover:
            let modem = event.uplink?.modem.map { "modem \($0.equipmentID) " } ?? "modem "
            let total = event.uplink?.modem.map { ", recovery step \($0.recoveriesTotal) since start" } ?? ""
            warning("\(interface): \(modem)registered but the uplink is not online (\(event.verdict.rawValue), \(event.reason.rawValue)): "
                    + "recovery step \(event.recoveryStep?.rawValue ?? "-")\(total)")
        case .outage:
            guard let record = event.outage else { return }
            let reasons = record.reasons.map { "\($0.interface) \($0.reason.rawValue)" }.joined(separator: ", ")
            notice("site: offline for \(record.durationMilliseconds) ms, over (primary \(event.primary?.value ?? "none"); \(reasons.isEmpty ? "no reasons" : reasons))")
        case .plan:
            guard let plan = event.uplink?.plan else { return }
            let limit = plan.limitBytes.map { " of \($0) (\(plan.percent ?? 0) %)" } ?? ""
            switch event.planThreshold {
            case .mark(100)?:
                warning("\(interface): data plan used up: \(plan.usedBytes) bytes\(limit); at-cap \(plan.atCap.rawValue)")
            case .mark(let percent)?:
                notice("\(interface): data plan at \(percent) %: \(plan.usedBytes) bytes\(limit)")
            case .newCycle?, nil:
                notice("\(interface): data plan: a new cycle, until \(plan.cycleEndWallSeconds) (seconds since the epoch)")
            }
        }
    }

    static func note(_ note: AgentNote) {
        switch note {
        case .suppressed(let name, let penalty, let limit, let releaseSeconds):
            notice("\(name): flapping (penalty \(penalty), suppress limit \(limit)): suppressed by flap damping, "
                   + "not primary again for about \(releaseSeconds) s unless nothing else is online")
        case .released(let name, let reuseLimit):
            notice("\(name): flap damping penalty down to \(reuseLimit): no longer suppressed")
        case .passedOver(let name):
            notice("\(name): passed over for primary: suppressed by flap damping")
        case .stalled(let name, let evidence):
            info("\(name): packets leave with nothing coming back (\(evidence.unansweredPackets) unanswered, "
                 + "nothing back for \(evidence.silentMilliseconds) ms): a full round "
                 + "(\(evidence.rule.rawValue) rule, the first waited \(evidence.waitedMilliseconds) ms)")
        }
    }
}
