/// The agent's state as a Prometheus textfile (text exposition format 0.0.4), for
/// node_exporter's textfile collector: every metric named `uplinkd_...` in base
/// units (seconds, bytes, ratios), counters ending in `_total`, each family with its
/// HELP and TYPE lines. Per-uplink series carry `interface` and `kind` labels.
/// Checked by `promtool check metrics` (Tests/integration/test_metrics.py).
package enum PrometheusText {
    package static func format(_ state: AgentState, counters: MetricCounters,
                              version: String = UplinkVersion.string) -> String {
        let families = agentFamilies(state, counters: counters, version: version)
            + verdictFamilies(state, counters: counters) + qualityFamilies(state.uplinks) + modemFamilies(state.uplinks)
            + planFamilies(state.uplinks)
        // A family without samples is left out whole: no HELP or TYPE for nothing.
        return families.filter { !$0.samples.isEmpty }.map(\.text).joined()
    }

    /// One family with a sample per uplink that has a value.
    private static func perUplink(_ uplinks: [UplinkStatus], _ name: String, _ help: String, _ type: Family.Kind,
                                  _ value: (UplinkStatus) -> String?) -> Family {
        Family(name, help, type, uplinks.compactMap { uplink in value(uplink).map { Sample(labels(uplink), $0) } })
    }

    private static func agentFamilies(_ state: AgentState, counters: MetricCounters, version: String) -> [Family] {
        [
            Family("uplinkd_info", "The running uplinkd's version; always 1.", .gauge,
                   [Sample([("version", version)], "1")]),
            Family("uplinkd_running", "1 while the agent runs; 0 in the file it leaves when it stops.", .gauge,
                   [Sample([], state.stopped ? "0" : "1")]),
            Family("uplinkd_state_written_timestamp_seconds",
                   "When the agent last published a change of its state, in seconds since the epoch.", .gauge,
                   [Sample([], String(state.writtenWallSeconds))]),
            Family("uplinkd_hook_events_pending",
                   "Hook events waiting to run, the one running included.", .gauge,
                   [Sample([], String(counters.hookEventsPending))]),
            Family("uplinkd_primary_changes_total",
                   "Changes of the primary uplink (to or from none included) since the agent started.", .counter,
                   [Sample([], String(counters.primaryChanges))]),
            Family("uplinkd_site_outages_total",
                   "Periods without a primary (the site offline) that ended since the agent started (the outage journal).",
                   .counter, [Sample([], String(counters.siteOutages))]),
            Family("uplinkd_site_outage_seconds_total",
                   "Seconds of those periods.", .counter,
                   [Sample([], decimal(counters.siteOutageMilliseconds, scale: 3))]),
        ]
    }

    private static func verdictFamilies(_ state: AgentState, counters: MetricCounters) -> [Family] {
        let uplinks = state.uplinks
        func perUplink(_ name: String, _ help: String, _ type: Family.Kind, _ value: (UplinkStatus) -> String?) -> Family {
            PrometheusText.perUplink(uplinks, name, help, type, value)
        }
        return [
            perUplink("uplinkd_uplink_up", "1 when the uplink's verdict is online, else 0.", .gauge) {
                flag($0.verdict == .online)
            },
            Family("uplinkd_uplink_verdict",
                   "The uplink's verdict: 1 for the current one, 0 for the others (one series per verdict).", .gauge,
                   uplinks.flatMap { uplink in
                       Verdict.allCases.map { verdict in
                           Sample(labels(uplink) + [("verdict", verdict.rawValue)], flag(uplink.verdict == verdict))
                       }
                   }),
            perUplink("uplinkd_uplink_primary", "1 for the primary uplink, else 0.", .gauge) {
                flag($0.interface == state.primary)
            },
            perUplink("uplinkd_uplink_last_change_timestamp_seconds",
                      "When the uplink reached its current verdict, in seconds since the epoch.", .gauge) {
                String($0.sinceWallSeconds)
            },
            perUplink("uplinkd_verdict_changes_total", "Verdict changes of the uplink since the agent started.",
                      .counter) { String(counters.verdictChanges[$0.interface] ?? 0) },
            perUplink("uplinkd_probe_bytes_total",
                      "Bytes of probes sent and received through the uplink since the agent started.", .counter) {
                String(counters.probeBytes[$0.interface] ?? 0)
            },
            perUplink("uplinkd_outages_total",
                      "Periods the uplink was not online that ended since the agent started (the outage journal).",
                      .counter) { String(counters.outages[$0.interface] ?? 0) },
            perUplink("uplinkd_outage_seconds_total", "Seconds of those periods.", .counter) {
                decimal(counters.outageMilliseconds[$0.interface] ?? 0, scale: 3)
            },
            Family("uplinkd_stall_alarms_total",
                   "Alarms the uplink's own traffic raised as primary (a confirming round each), by rule, since the agent started.",
                   .counter, uplinks.flatMap { uplink in
                       StallRule.allCases.map { rule in
                           Sample(labels(uplink) + [("rule", rule.rawValue)], String(counters.stallAlarms[uplink.interface]?[rule] ?? 0))
                       }
                   }),
        ]
    }

    private static func qualityFamilies(_ uplinks: [UplinkStatus]) -> [Family] {
        func perUplink(_ name: String, _ help: String, _ type: Family.Kind, _ value: (UplinkStatus) -> String?) -> Family {
            PrometheusText.perUplink(uplinks, name, help, type, value)
        }
        return [
            perUplink("uplinkd_uplink_rtt_seconds", "Smoothed TCP handshake time of the uplink's probes.", .gauge) {
                $0.quality.figures.roundTripMilliseconds.map { decimal($0, scale: 3) }
            },
            perUplink("uplinkd_uplink_rtt_variation_seconds", "Mean deviation of the handshake time (jitter).", .gauge) {
                $0.quality.figures.roundTripVariationMilliseconds.map { decimal($0, scale: 3) }
            },
            perUplink("uplinkd_uplink_loss_ratio", "Estimated share of packets lost (0 to 1).", .gauge) {
                $0.quality.figures.lossPercent.map { decimal($0, scale: 2) }
            },
            perUplink("uplinkd_uplink_degraded", "1 when the uplink's quality marks it degraded, else 0.", .gauge) {
                flag($0.quality.degraded)
            },
            perUplink("uplinkd_uplink_flap_penalty", "The uplink's flap damping penalty.", .gauge) {
                String($0.quality.flapPenalty)
            },
            perUplink("uplinkd_uplink_suppressed", "1 while flap damping keeps the uplink from being primary, else 0.",
                      .gauge) { flag($0.quality.suppressed) },
            perUplink("uplinkd_uplink_pinned_connections",
                      "Connections pinned to the uplink ([flows] pinning), as conntrack counted them at most 30 s ago.",
                      .gauge) { $0.pinnedConnections.map(String.init) },
        ]
    }

    /// Data plans, for uplinks that have one.
    private static func planFamilies(_ uplinks: [UplinkStatus]) -> [Family] {
        func perUplink(_ name: String, _ help: String, _ value: (PlanStatus) -> String?) -> Family {
            PrometheusText.perUplink(uplinks, name, help, .gauge) { uplink in uplink.plan.flatMap(value) }
        }
        return [
            perUplink("uplinkd_uplink_plan_used_bytes",
                      "Bytes the uplink carried in its data plan's current cycle, both ways, at the IP level.") {
                String($0.usedBytes)
            },
            perUplink("uplinkd_uplink_plan_bytes", "The uplink's data plan: bytes a cycle allows (absent when unlimited).") {
                $0.limitBytes.map(String.init)
            },
            perUplink("uplinkd_uplink_plan_cycle_end_timestamp_seconds",
                      "When the data plan's current cycle ends, in seconds since the epoch.") { String($0.cycleEndWallSeconds) },
        ]
    }

    /// The modems that carry uplinks: labelled like the uplink, plus `equipment_id`.
    private static func modemFamilies(_ uplinks: [UplinkStatus]) -> [Family] {
        let modems = uplinks.filter { $0.modem != nil }
        func perModem(_ name: String, _ help: String, _ type: Family.Kind, _ value: (ModemStatus) -> String?) -> Family {
            Family(name, help, type, modems.compactMap { uplink in
                value(uplink.modem!).map { Sample(labels(uplink) + [("equipment_id", uplink.modem!.equipmentID)], $0) }
            })
        }
        func tenths(_ value: Double?) -> String? { ModemStatus.tenths(value).map { decimal($0, scale: 1) } }
        return [
            perModem("uplinkd_modem_registered", "1 when the modem is registered on a network that carries data, else 0.",
                     .gauge) { flag($0.registration?.isRegistered == true) },
            Family("uplinkd_modem_state", "The modem's state as ModemManager names it: 1 for the current one (one series per state seen).",
                   .gauge, modems.map { uplink in
                       Sample(labels(uplink) + [("equipment_id", uplink.modem!.equipmentID), ("state", uplink.modem!.state.name)], "1")
                   }),
            perModem("uplinkd_modem_rsrp_dbm", "LTE/5G reference signal received power.", .gauge) { tenths($0.signal.rsrpDBm) },
            perModem("uplinkd_modem_rsrq_db", "LTE/5G reference signal received quality.", .gauge) { tenths($0.signal.rsrqDB) },
            perModem("uplinkd_modem_sinr_db", "LTE/5G signal to interference and noise ratio.", .gauge) { tenths($0.signal.sinrDB) },
            perModem("uplinkd_modem_signal_quality_ratio", "ModemManager's signal quality figure (0 to 1).", .gauge) {
                $0.signalQualityPercent.map { decimal($0, scale: 2) }
            },
            perModem("uplinkd_modem_recoveries_total", "Recovery steps taken on the modem since the agent started.",
                     .counter) { String($0.recoveriesTotal) },
        ]
    }

    /// A label value as the text format wants it: backslash, double quote and line
    /// feed escaped.
    package static func escapeLabelValue(_ value: String) -> String {
        escape(value, quote: true)
    }

    /// HELP text escapes only backslash and line feed.
    static func escapeHelp(_ text: String) -> String {
        escape(text, quote: false)
    }

    private static func escape(_ text: String, quote: Bool) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"" where quote: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `value` / 10^scale as an exact decimal (12 ms, scale 3: "0.012"), so no
    /// floating-point rounding shows in the file.
    package static func decimal(_ value: Int, scale: Int) -> String {
        var divisor = 1
        for _ in 0..<scale { divisor *= 10 }
        let magnitude = value.magnitude
        let whole = magnitude / UInt(divisor)
        var fraction = String(magnitude % UInt(divisor))
        fraction = String(repeating: "0", count: scale - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (value < 0 ? "-" : "") + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    private static func flag(_ condition: Bool) -> String { condition ? "1" : "0" }

    private static func labels(_ uplink: UplinkStatus) -> [(String, String)] {
        [("interface", uplink.interface.value), ("kind", uplink.kind.rawValue)]
    }

    private struct Sample {
        var labels: [(String, String)]
        var value: String

        init(_ labels: [(String, String)], _ value: String) {
            self.labels = labels
            self.value = value
        }
    }

    private struct Family {
        enum Kind: String {
            case gauge
            case counter
        }

        var name: String
        var help: String
        var kind: Kind
        var samples: [Sample]

        init(_ name: String, _ help: String, _ kind: Kind, _ samples: [Sample]) {
            self.name = name
            self.help = help
            self.kind = kind
            self.samples = samples
        }

        var text: String {
            var text = "# HELP \(name) \(PrometheusText.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
            for sample in samples {
                text += name
                if !sample.labels.isEmpty {
                    text += "{" + sample.labels.map { "\($0.0)=\"\(PrometheusText.escapeLabelValue($0.1))\"" }
                        .joined(separator: ",") + "}"
                }
                text += " \(sample.value)\n"
            }
            return text
        }
    }
}
