/// One named fact of the published state: its name, which every output uses (the
/// state file and JSON as it is, MQTT as JSON, the hook environment as `UPLINK_` and
/// the name in capitals), what it says, and how it is read from the state and put back.
package struct Fact<Subject>: Sendable {
    package let name: String
    package let kind: FactValue.Kind
    /// One sentence for uplinkd-state(5)'s list of facts, values included (`code` in
    /// backticks, set in bold there).
    package let meaning: String
    package let value: @Sendable (Subject) -> FactValue
    /// Puts a value read from the state file back; nil for a fact derived from others.
    let restore: (@Sendable (inout Subject, FactValue) -> Void)?

    package var environmentName: String { "UPLINK_" + name.uppercased() }
}

/// The one table of the published facts: the state file (format 2), `status --json`,
/// the MQTT `state` and uplink payloads, the hook environment and uplinkd-state(5)'s
/// list of facts are all written from it, so a fact has one name everywhere.
package enum StateFacts {
    /// Facts of the whole node. The hook environment has the primaries too, as the
    /// event leaves them; `decision` is the event's own number there.
    package static let node: [Fact<AgentState>] = [
        Fact(name: "written", kind: .whole, meaning: "when the agent wrote the state (seconds since the epoch)",
             value: { .whole($0.writtenWallSeconds) }, restore: { $0.writtenWallSeconds = time($1) ?? 0 }),
        Fact(name: "pid", kind: .whole, meaning: "the agent's process id",
             value: { .whole($0.pid) }, restore: { $0.pid = min($1.whole ?? 0, Int(Int32.max)) }),
        Fact(name: "stopped", kind: .flag, meaning: "`yes` in the last state of an agent that stopped",
             value: { .flag($0.stopped) }, restore: { $0.stopped = $1.flag ?? false }),
        Fact(name: "primary", kind: .text, meaning: "the uplink that carries the traffic, `-` when none is online",
             value: { .text($0.primary?.value) }, restore: { $0.primary = $1.text.flatMap(InterfaceName.init) }),
        Fact(name: "primary_ipv4", kind: .text, meaning: "the primary for IPv4",
             value: { .text($0.familyPrimaries[.ipv4]?.value) },
             restore: { $0.familyPrimaries[.ipv4] = $1.text.flatMap(InterfaceName.init) }),
        Fact(name: "primary_ipv6", kind: .text, meaning: "the primary for IPv6",
             value: { .text($0.familyPrimaries[.ipv6]?.value) },
             restore: { $0.familyPrimaries[.ipv6] = $1.text.flatMap(InterfaceName.init) }),
        Fact(name: "decision", kind: .whole,
             meaning: "the number of the latest decision (a hook event: verdict, primary, repair, recover, plan, outage, stop) since the agent started",
             value: { .whole($0.decision) }, restore: { $0.decision = $1.whole ?? 0 }),
        Fact(name: "hooks_done", kind: .whole,
             meaning: "every decision up to this number has had its hooks run; equal to `decision`, the routes and whatever else the hooks do match the state",
             value: { .whole($0.hooksDone) }, restore: { $0.hooksDone = $1.whole ?? 0 }),
        Fact(name: "spread", kind: .text,
             meaning: "with `[flows] pinning`: the uplinks new connections go to, each with its weight (`eth0:3,wlan0:1`); open connections stay on the uplink they started on; `-` without pinning",
             value: { .text($0.spread) }, restore: { $0.spread = $1.text }),
        Fact(name: "provisional", kind: .text,
             meaning: "the primary while it is in doubt: new connections avoid it until a round clears or confirms it, open ones stay; `-` otherwise",
             value: { .text($0.provisional?.value) }, restore: { $0.provisional = $1.text.flatMap(InterfaceName.init) }),
    ]

    /// Facts of each uplink, in the order the state file lists them.
    package static let uplink: [Fact<UplinkStatus>] = verdict + cost + quality + modem + plan + [standby, pinned]

    static let verdict: [Fact<UplinkStatus>] = [
        Fact(name: "kind", kind: .text, meaning: "`ethernet`, `wifi`, `wwan` or `other`",
             value: { .text($0.kind.rawValue) }, restore: { $0.kind = $1.text.flatMap(InterfaceKind.init) ?? .other }),
        Fact(name: "verdict", kind: .text, meaning: "`online`, `captive`, `limited`, `down` or `unknown`",
             value: { .text($0.verdict.rawValue) }, restore: { $0.verdict = $1.text.flatMap(Verdict.init) ?? .unknown }),
        Fact(name: "reason", kind: .text, meaning: "why, from README's reasons table",
             value: { .text($0.reason.rawValue) }, restore: { $0.reason = Reason(token: $1.text ?? "") }),
        Fact(name: "since", kind: .whole, meaning: "when the verdict was reached (seconds since the epoch)",
             value: { .whole($0.sinceWallSeconds) }, restore: { $0.sinceWallSeconds = time($1) ?? 0 }),
        Fact(name: "ipv4_verdict", kind: .text, meaning: "the IPv4 verdict, `-` when IPv4 was not looked at",
             value: { .text($0.ipv4?.rawValue) }, restore: { $0.ipv4 = $1.text.flatMap(Verdict.init) }),
        Fact(name: "ipv4_reason", kind: .text, meaning: "the IPv4 reason",
             value: { .text($0.ipv4Reason?.rawValue) }, restore: { $0.ipv4Reason = $1.text.map(Reason.init(token:)) }),
        Fact(name: "ipv6_verdict", kind: .text, meaning: "the IPv6 verdict, `-` when IPv6 was not looked at",
             value: { .text($0.ipv6?.rawValue) }, restore: { $0.ipv6 = $1.text.flatMap(Verdict.init) }),
        Fact(name: "ipv6_reason", kind: .text, meaning: "the IPv6 reason",
             value: { .text($0.ipv6Reason?.rawValue) }, restore: { $0.ipv6Reason = $1.text.map(Reason.init(token:)) }),
        Fact(name: "portal_url", kind: .text, meaning: "the portal's login page while `captive`, when it named one",
             value: { .text($0.portalURL) }, restore: { $0.portalURL = $1.text }),
        Fact(name: "dns_source", kind: .text,
             meaning: "where its DNS servers came from in its last round: `configured`, `networkd`, `networkmanager`, `dhclient`, `resolvconf`, or `resolv.conf` (the system's)",
             value: { .text($0.dnsSource?.rawValue) }, restore: { $0.dnsSource = $1.text.flatMap(DNSSource.init) }),
        Fact(name: "dns_per_uplink", kind: .flag, meaning: "whether those servers are its own (not the system's)",
             value: { .flag($0.dnsSource?.isPerUplink ?? false) }, restore: nil),
    ]

    static let cost: [Fact<UplinkStatus>] = [
        Fact(name: "metered", kind: .flag, meaning: "whether its probe bytes cost money",
             value: { .flag($0.metered) }, restore: { $0.metered = $1.flag ?? false }),
        Fact(name: "bytes_today", kind: .whole, meaning: "probe bytes spent today",
             value: { .whole($0.bytesToday) }, restore: { $0.bytesToday = $1.whole ?? 0 }),
        Fact(name: "budget_bytes", kind: .whole, meaning: "the daily probe budget, `-` without one",
             value: { .whole($0.budgetBytes) }, restore: { $0.budgetBytes = $1.whole }),
        Fact(name: "budget_exhausted", kind: .flag, meaning: "whether today's probe budget is spent",
             value: { .flag($0.budgetExhausted) }, restore: { $0.budgetExhausted = $1.flag ?? false }),
        Fact(name: "session_ends", kind: .whole,
             meaning: "when the captive-portal session ends (seconds since the epoch), when the portal's API said",
             value: { .whole($0.session.endsWallSeconds) }, restore: { $0.session.endsWallSeconds = time($1) }),
        Fact(name: "session_bytes_remaining", kind: .whole, meaning: "the data the portal session has left, when it said",
             value: { .whole($0.session.bytesRemaining) }, restore: { $0.session.bytesRemaining = $1.whole }),
    ]

    static let quality: [Fact<UplinkStatus>] = [
        Fact(name: "rtt_ms", kind: .whole, meaning: "smoothed round-trip time of its best online family",
             value: { .whole($0.quality.figures.roundTripMilliseconds) },
             restore: { $0.quality.figures.roundTripMilliseconds = $1.whole }),
        Fact(name: "rtt_variation_ms", kind: .whole, meaning: "the round-trip time's variation",
             value: { .whole($0.quality.figures.roundTripVariationMilliseconds) },
             restore: { $0.quality.figures.roundTripVariationMilliseconds = $1.whole }),
        Fact(name: "loss_pct", kind: .whole, meaning: "recent loss, in percent",
             value: { .whole($0.quality.figures.lossPercent) }, restore: { $0.quality.figures.lossPercent = $1.whole }),
        Fact(name: "degraded", kind: .flag, meaning: "whether those figures mark it degraded",
             value: { .flag($0.quality.degraded) }, restore: { $0.quality.degraded = $1.flag ?? false }),
        Fact(name: "flap_penalty", kind: .whole, meaning: "its flap-damping penalty",
             value: { .whole($0.quality.flapPenalty) }, restore: { $0.quality.flapPenalty = $1.whole ?? 0 }),
        Fact(name: "suppressed", kind: .flag, meaning: "whether flap damping keeps it from being primary",
             value: { .flag($0.quality.suppressed) }, restore: { $0.quality.suppressed = $1.flag ?? false }),
    ]

    /// The modem's facts: all `-` for an uplink no modem carries.
    static let modem: [Fact<UplinkStatus>] = [
        Fact(name: "modem_equipment_id", kind: .text, meaning: "the modem's IMEI (or other equipment id)",
             value: { .text($0.modem?.equipmentID) }, restore: nil),
        Fact(name: "modem_state", kind: .text, meaning: "its state as `mmcli` names it (`registered`, `connected`...)",
             value: { .text($0.modem?.state.name) }, restore: { $0.modem?.state = ModemState(name: $1.text ?? "") }),
        Fact(name: "modem_registration", kind: .text, meaning: "its 3GPP registration: `home`, `roaming`, `searching`, `denied`, `idle`...",
             value: { .text($0.modem?.registration?.name) },
             restore: { $0.modem?.registration = $1.text.flatMap(RegistrationState.init(name:)) }),
        Fact(name: "modem_operator", kind: .text, meaning: "the network's name (`Vodafone DE`)",
             value: { .text($0.modem?.operatorName) }, restore: { $0.modem?.operatorName = $1.text }),
        Fact(name: "modem_operator_code", kind: .text, meaning: "the network's MCC and MNC (`26202`)",
             value: { .text($0.modem?.operatorCode) }, restore: { $0.modem?.operatorCode = $1.text }),
        Fact(name: "modem_access_technology", kind: .text, meaning: "`lte`, `5gnr`, `umts`... (several joined by `,`)",
             value: { .text($0.modem.flatMap { $0.accessTechnologies.isEmpty ? nil : $0.accessTechnologies.names }) },
             restore: { $0.modem?.accessTechnologies = AccessTechnologies(names: $1.text ?? "") }),
        Fact(name: "modem_rsrp_dbm", kind: .tenths, meaning: "LTE/5G reference signal received power",
             value: { .figure($0.modem?.signal.rsrpDBm) }, restore: { $0.modem?.signal.rsrpDBm = $1.figure }),
        Fact(name: "modem_rsrq_db", kind: .tenths, meaning: "reference signal received quality",
             value: { .figure($0.modem?.signal.rsrqDB) }, restore: { $0.modem?.signal.rsrqDB = $1.figure }),
        Fact(name: "modem_sinr_db", kind: .tenths, meaning: "signal to interference and noise",
             value: { .figure($0.modem?.signal.sinrDB) }, restore: { $0.modem?.signal.sinrDB = $1.figure }),
        Fact(name: "modem_rssi_dbm", kind: .tenths, meaning: "received signal strength",
             value: { .figure($0.modem?.signal.rssiDBm) }, restore: { $0.modem?.signal.rssiDBm = $1.figure }),
        Fact(name: "modem_signal_quality_pct", kind: .whole, meaning: "ModemManager's 0–100 signal figure",
             value: { .whole($0.modem?.signalQualityPercent) }, restore: { $0.modem?.signalQualityPercent = $1.whole }),
        Fact(name: "modem_recovery_step", kind: .text,
             meaning: "the highest recovery step of the current episode (`reconnect`, `reset`, `power-cycle`)",
             value: { .text($0.modem?.recoveryStep?.rawValue) },
             restore: { $0.modem?.recoveryStep = $1.text.flatMap(RecoveryStep.init) }),
        Fact(name: "modem_recoveries_total", kind: .whole, meaning: "recovery steps taken since the agent started",
             value: { .whole($0.modem?.recoveriesTotal) }, restore: { $0.modem?.recoveriesTotal = $1.whole ?? 0 }),
    ]

    /// The data plan's facts: all `-` for an uplink without one.
    static let plan: [Fact<UplinkStatus>] = [
        Fact(name: "plan_used_bytes", kind: .whole, meaning: "bytes used this cycle, both ways",
             value: { .whole($0.plan?.usedBytes) }, restore: nil),
        Fact(name: "plan_received_bytes", kind: .whole, meaning: "bytes received this cycle",
             value: { .whole($0.plan?.received) }, restore: { $0.plan?.received = $1.whole ?? 0 }),
        Fact(name: "plan_sent_bytes", kind: .whole, meaning: "bytes sent this cycle",
             value: { .whole($0.plan?.sent) }, restore: { $0.plan?.sent = $1.whole ?? 0 }),
        Fact(name: "plan_bytes", kind: .whole, meaning: "the plan's limit, `-` when it only counts",
             value: { .whole($0.plan?.limitBytes) }, restore: { $0.plan?.limitBytes = $1.whole }),
        Fact(name: "plan_percent", kind: .whole, meaning: "the whole percentage of the limit used",
             value: { .whole($0.plan?.percent) }, restore: nil),
        Fact(name: "plan_started", kind: .whole, meaning: "when the cycle began (seconds since the epoch)",
             value: { .whole($0.plan?.cycleStartWallSeconds) }, restore: nil),
        Fact(name: "plan_resets", kind: .whole, meaning: "when the next cycle begins",
             value: { .whole($0.plan?.cycleEndWallSeconds) }, restore: { $0.plan?.cycleEndWallSeconds = time($1) ?? 0 }),
        Fact(name: "plan_capped", kind: .flag, meaning: "whether the limit is reached",
             value: { .flag($0.plan?.capped) }, restore: { $0.plan?.capped = $1.flag ?? false }),
        Fact(name: "plan_at_cap", kind: .text, meaning: "what the agent does at the cap: `last-resort` or `down`",
             value: { .text($0.plan?.atCap.rawValue) },
             restore: { $0.plan?.atCap = $1.text.flatMap(AtCap.init) ?? .lastResort }),
    ]

    static let standby = Fact<UplinkStatus>(
        name: "standby", kind: .text, meaning: "how it waits as a backup: `hot`, `warm` or `cold`",
        value: { .text($0.standby.rawValue) }, restore: { $0.standby = $1.text.flatMap(Standby.init) ?? .hot })

    static let pinned = Fact<UplinkStatus>(
        name: "pinned", kind: .whole,
        meaning: "with `[flows] pinning`: the connections pinned to it, as conntrack counted them at most 30 s ago; `-` without pinning or before the first count",
        value: { .whole($0.pinnedConnections) }, restore: { $0.pinnedConnections = $1.whole })

    /// A time read back: seconds since the epoch that make sense (readers subtract them
    /// from now), else none.
    static func time(_ value: FactValue) -> Int? {
        value.whole.flatMap { StateFileFormat.validTimes.contains($0) ? $0 : nil }
    }

    /// The facts by name, for readers that are given a name (the state file's lines,
    /// `status --get`).
    package static let nodeByName = Dictionary(uniqueKeysWithValues: node.map { ($0.name, $0) })
    package static let uplinkByName = Dictionary(uniqueKeysWithValues: uplink.map { ($0.name, $0) })

    /// Facts an uplink must have in a state file: without them it is no uplink.
    static let required: Set<String> = ["kind", "verdict", "reason", "since"]

    /// The uplink of `name` from facts read from a file (name → value); the modem and
    /// the plan exist when their first fact does.
    static func uplink(named name: InterfaceName, _ values: [String: FactValue]) -> UplinkStatus {
        var status = UplinkStatus(interface: name, kind: .other, verdict: .unknown, reason: .unrecognized, sinceWallSeconds: 0)
        if let equipmentID = values["modem_equipment_id"]?.text {
            status.modem = ModemStatus(ModemFacts(equipmentID: equipmentID, state: .unknown))
        }
        if let start = values["plan_started"].flatMap(time) {
            status.plan = PlanStatus(received: 0, sent: 0, limitBytes: nil, cycleStartWallSeconds: start,
                                     cycleEndWallSeconds: start)
        }
        for fact in uplink {
            guard let restore = fact.restore, let value = values[fact.name] else { continue }
            restore(&status, value)
        }
        return status
    }

    /// uplinkd-state(5)'s list of the facts, in roff: a subsection for the node's and
    /// one for each uplink's, an entry per fact tagged with its name and the form of
    /// its value (a test holds the page to it).
    package static var manualTable: String {
        var lines = [".SS Node facts"]
        lines += node.flatMap { RoffText.entry(name: $0.name, kind: $0.kind, meaning: $0.meaning) }
        lines.append(".SS Uplink facts")
        lines += uplink.flatMap { RoffText.entry(name: $0.name, kind: $0.kind, meaning: $0.meaning) }
        return lines.joined(separator: "\n")
    }
}

/// The facts' markdown-flavoured sentences (`code` in backticks) as roff for a manual
/// page: code in bold with its hyphens as minus signs (so that a value copied from the
/// page is the value), and every byte outside ASCII as a named glyph, so that groff
/// renders the page the same with or without a preprocessor that knows UTF-8.
enum RoffText {
    /// One `.TP` entry: `.BI "NAME " FORM`, then the meaning as a sentence.
    static func entry(name: String, kind: FactValue.Kind, meaning: String) -> [String] {
        [".TP", ".BI \"\(escaped(name, code: true)) \" \(form(kind))", sentence(meaning)]
    }

    /// The words uplinkd-state(5)'s FORMAT section gives each kind of value.
    static func form(_ kind: FactValue.Kind) -> String {
        switch kind {
        case .text: "text"
        case .whole: "number"
        case .flag: "flag"
        case .tenths: "figure"
        }
    }

    /// `meaning` with a capital and a full stop, backticks turned into bold.
    static func sentence(_ meaning: String) -> String {
        var text = ""
        var inCode = false
        for (index, piece) in meaning.split(separator: "`", omittingEmptySubsequences: false).enumerated() {
            if index > 0 {
                text += inCode ? "\\fR" : "\\fB"
                inCode.toggle()
            }
            text += escaped(piece, code: inCode)
        }
        if let first = text.first, first.isLowercase, first.isASCII {
            text = first.uppercased() + text.dropFirst()
        }
        if !text.hasSuffix(".") { text += "." }
        // A line that starts with a dot or an apostrophe would be read as a request.
        return text.hasPrefix(".") || text.hasPrefix("'") ? "\\&" + text : text
    }

    static func escaped(_ text: some StringProtocol, code: Bool) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\e"
            case "-" where code: result += "\\-"
            case _ where !scalar.isASCII:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
