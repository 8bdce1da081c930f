/// The state file's format 1, written only when `[agent] state-format = 1` asks for it
/// (until the date uplinkd-state(5) gives) and read by `uplinkd status`: a few header lines, then one line per uplink,
/// whitespace-separated fields with "-" for none, so POSIX sh and awk can read it:
///
///     # uplinkd state, format 1 (see uplinkd-state(5))
///     # uplink NAME KIND VERDICT REASON SINCE IPV4 IPV6 BYTES-TODAY BUDGET EXHAUSTED PORTAL-URL IPV4-REASON IPV6-REASON DNS-SOURCE METERED RTT-MS RTT-VARIATION-MS LOSS-PCT DEGRADED FLAP-PENALTY SUPPRESSED SESSION-ENDS SESSION-BYTES MODEM MODEM-STATE REGISTRATION OPERATOR OPERATOR-CODE ACCESS-TECHNOLOGY RSRP-DBM RSRQ-DB SINR-DB SIGNAL-PCT RECOVERY-STEP RECOVERIES PLAN-USED PLAN-BYTES PLAN-STARTS PLAN-ENDS PLAN-RECEIVED PLAN-SENT PLAN-CAPPED AT-CAP STANDBY
///     format 1
///     written 1763733436
///     pid 4242
///     state running
///     primary eth0
///     uplink eth0 ethernet online validated 1763733400 online - 2345 - no - validated - dhclient no 12 3 0 no 0 no - - - - - - - - - - - - - 0 - - - - - - no - hot
///
/// Readers must ignore lines they do not know; new fields are only ever appended.
package enum StateFileFormat1 {
    package static let version = 1
    package static let columns = "uplink NAME KIND VERDICT REASON SINCE IPV4 IPV6 BYTES-TODAY BUDGET EXHAUSTED PORTAL-URL IPV4-REASON IPV6-REASON DNS-SOURCE METERED RTT-MS RTT-VARIATION-MS LOSS-PCT DEGRADED FLAP-PENALTY SUPPRESSED SESSION-ENDS SESSION-BYTES MODEM MODEM-STATE REGISTRATION OPERATOR OPERATOR-CODE ACCESS-TECHNOLOGY RSRP-DBM RSRQ-DB SINR-DB SIGNAL-PCT RECOVERY-STEP RECOVERIES PLAN-USED PLAN-BYTES PLAN-STARTS PLAN-ENDS PLAN-RECEIVED PLAN-SENT PLAN-CAPPED AT-CAP STANDBY"

    package static func encode(_ state: AgentState) -> String {
        var lines = [
            "# uplinkd state, format \(version) (see uplinkd-state(5))",
            "# \(columns)",
            "format \(version)",
            "written \(state.writtenWallSeconds)",
            "pid \(state.pid)",
            "state \(state.stopped ? "stopped" : "running")",
            "primary \(state.primary?.value ?? "-")",
            "primary-ipv4 \(state.familyPrimaries[.ipv4]?.value ?? "-")",
            "primary-ipv6 \(state.familyPrimaries[.ipv6]?.value ?? "-")",
        ]
        for uplink in state.uplinks {
            let fields = ["uplink"] + verdictFields(uplink) + qualityFields(uplink)
                + modemFields(uplink.modem) + planFields(uplink.plan) + [uplink.standby.rawValue]
            lines.append(fields.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Columns 2 to 16: the verdict, its families, probe bytes, the portal, DNS, metering.
    static func verdictFields(_ uplink: UplinkStatus) -> [String] {
        // Two arrays with their type written out: as one literal, Swift 6.0's type
        // checker gives up on it.
        let verdict: [String] = [
            uplink.interface.value, uplink.kind.rawValue, uplink.verdict.rawValue, uplink.reason.rawValue,
            String(uplink.sinceWallSeconds), uplink.ipv4?.rawValue ?? "-", uplink.ipv6?.rawValue ?? "-",
        ]
        let rest: [String] = [
            String(uplink.bytesToday), optional(uplink.budgetBytes),
            uplink.budgetExhausted ? "yes" : "no", uplink.portalURL.map(urlToken) ?? "-",
            uplink.ipv4Reason?.rawValue ?? "-", uplink.ipv6Reason?.rawValue ?? "-",
            uplink.dnsSource?.rawValue ?? "-", uplink.metered ? "yes" : "no",
        ]
        return verdict + rest
    }

    /// Columns 17 to 24: quality, damping and the captive-portal session.
    static func qualityFields(_ uplink: UplinkStatus) -> [String] {
        let figures = uplink.quality.figures
        return [
            optional(figures.roundTripMilliseconds), optional(figures.roundTripVariationMilliseconds),
            optional(figures.lossPercent), uplink.quality.degraded ? "yes" : "no", String(uplink.quality.flapPenalty),
            uplink.quality.suppressed ? "yes" : "no",
            optional(uplink.session.endsWallSeconds), optional(uplink.session.bytesRemaining),
        ]
    }

    private static func optional(_ number: Int?) -> String { number.map(String.init) ?? "-" }

    /// Columns 25 to 36: the modem that carries the uplink ("-" where unknown).
    static func modemFields(_ modem: ModemStatus?) -> [String] {
        guard let modem else { return Array(repeating: "-", count: 11) + ["0"] }
        func figure(_ value: Double?) -> String { ModemStatus.tenths(value).map { PrometheusText.decimal($0, scale: 1) } ?? "-" }
        return [
            token(modem.equipmentID), modem.state.name, modem.registration?.name ?? "-", modem.operatorName.map(token) ?? "-",
            modem.operatorCode.map(token) ?? "-", modem.accessTechnologies.isEmpty ? "-" : modem.accessTechnologies.names,
            figure(modem.signal.rsrpDBm), figure(modem.signal.rsrqDB), figure(modem.signal.sinrDB),
            modem.signalQualityPercent.map(String.init) ?? "-", modem.recoveryStep?.rawValue ?? "-", String(modem.recoveriesTotal),
        ]
    }

    /// The modem of an uplink line, when the line has one (columns 25 and on).
    static func modem(_ line: LineFormat.Line) -> ModemStatus? {
        guard line.fields.count > 35, let equipmentID = line.optionalField(24) else { return nil }
        let fields = line.fields
        var facts = ModemFacts(equipmentID: untoken(equipmentID), state: ModemState(name: fields[25]))
        facts.registration = RegistrationState(name: fields[26])
        facts.operatorName = line.optionalField(27).map(untoken)
        facts.operatorCode = line.optionalField(28).map(untoken)
        facts.accessTechnologies = AccessTechnologies(names: fields[29])
        facts.signal = SignalFigures(rsrpDBm: Double(fields[30]), rsrqDB: Double(fields[31]), sinrDB: Double(fields[32]))
        facts.signalQualityPercent = count(line, 33)
        return ModemStatus(facts, recoveryStep: RecoveryStep(rawValue: fields[34]), recoveriesTotal: count(line, 35) ?? 0)
    }

    /// Columns 37 to 44: the data plan ("-" without one; PLAN-BYTES "-" when unlimited).
    static func planFields(_ plan: PlanStatus?) -> [String] {
        guard let plan else { return Array(repeating: "-", count: 6) + ["no", "-"] }
        return [String(plan.usedBytes), plan.limitBytes.map(String.init) ?? "-", String(plan.cycleStartWallSeconds),
                String(plan.cycleEndWallSeconds), String(plan.received), String(plan.sent), plan.capped ? "yes" : "no",
                plan.atCap.rawValue]
    }

    /// The data plan of an uplink line, when it has one (columns 37 and on).
    static func plan(_ line: LineFormat.Line) -> PlanStatus? {
        guard line.fields.count > 43, line.optionalField(36) != nil, let received = count(line, 40),
              let sent = count(line, 41), let start = line.integer(38, in: validTimes),
              let end = line.integer(39, in: validTimes) else { return nil }
        return PlanStatus(received: received, sent: sent, limitBytes: count(line, 37), cycleStartWallSeconds: start,
                          cycleEndWallSeconds: end, atCap: AtCap(rawValue: line.fields[43]) ?? .lastResort,
                          capped: line.fields[42] == "yes")
    }

    static func token(_ text: String) -> String { FactValue.percentEncoded(text) }

    static func untoken(_ field: String) -> String { FactValue.percentDecoded(field) }

    package typealias DecodeError = LineFormat.DecodeError

    package static func decode(_ text: String) throws(DecodeError) -> AgentState {
        var state = AgentState(primary: nil, uplinks: [], writtenWallSeconds: 0, pid: 0)
        try LineFormat.read(text, version: version, fileKind: "state file") { line throws(DecodeError) in
            switch line.keyword {
            case "written":
                guard let seconds = line.integer(1, in: validTimes) else { throw line.error("malformed time") }
                state.writtenWallSeconds = seconds
            case "pid":
                // 0 is "unknown", as a file without the line reads: no process has it,
                // so a reader never takes such a file for a running agent's.
                guard let pid = line.integer(1, in: 0...Int(Int32.max)) else { throw line.error("malformed pid") }
                state.pid = pid
            case "state":
                state.stopped = line.field(1) == "stopped"
            case "primary":
                state.primary = line.optionalField(1).flatMap { InterfaceName($0) }
            case "primary-ipv4", "primary-ipv6":
                let family: AddressFamily = line.keyword == "primary-ipv4" ? .ipv4 : .ipv6
                state.familyPrimaries[family] = line.optionalField(1).flatMap { InterfaceName($0) }
            case "uplink":
                let read = try uplink(line)
                // Format 2 names each fact by its uplink: two lines of one uplink
                // could not be told apart there, and no agent writes them.
                guard !state.uplinks.contains(where: { $0.interface == read.interface }) else {
                    throw line.error("uplink \(read.interface.value) listed twice")
                }
                state.uplinks.append(read)
            default:
                break   // lines of later versions
            }
        }
        return state
    }

    static func uplink(_ line: LineFormat.Line) throws(DecodeError) -> UplinkStatus {
        try line.requireFields(atLeast: 12, else: "malformed uplink line")
        let fields = line.fields
        guard let interface = InterfaceName(fields[1]), let kind = InterfaceKind(rawValue: fields[2]),
              let verdict = Verdict(rawValue: fields[3]), let since = line.integer(5, in: validTimes),
              let bytes = count(line, 8) else {
            throw line.error("malformed uplink line")
        }
        return UplinkStatus(
            interface: interface, kind: kind, verdict: verdict, reason: Reason(token: fields[4]), sinceWallSeconds: since,
            ipv4: Verdict(rawValue: fields[6]), ipv6: Verdict(rawValue: fields[7]), bytesToday: bytes,
            budgetBytes: count(line, 9), budgetExhausted: fields[10] == "yes", portalURL: line.optionalField(11),
            // Columns 13 to 16 came later: a file without them still reads.
            ipv4Reason: line.optionalField(12).map { Reason(token: $0) },
            ipv6Reason: line.optionalField(13).map { Reason(token: $0) },
            dnsSource: line.field(14).flatMap { DNSSource(rawValue: $0) },
            metered: line.field(15) == "yes",
            // Columns 17 to 22 (quality, damping) came with format 1 too.
            quality: UplinkQualityStatus(
                figures: QualityFigures(roundTripMilliseconds: count(line, 16), roundTripVariationMilliseconds: count(line, 17),
                                        lossPercent: count(line, 18)),
                degraded: line.field(19) == "yes", flapPenalty: count(line, 20) ?? 0,
                suppressed: line.field(21) == "yes"),
            // Columns 23 and 24 (the captive-portal API's session) came with 0.3.
            session: CaptivePortalSession(endsWallSeconds: line.integer(22, in: validTimes),
                                          bytesRemaining: count(line, 23)),
            // Columns 25 to 36 (the modem) came with 0.4.
            modem: modem(line),
            // Columns 37 to 45 (the data plan, the standby) came with data plans.
            plan: plan(line), standby: line.field(44).flatMap { Standby(rawValue: $0) } ?? .hot)
    }

    /// A non-negative whole number in column `index`, if the line has one there.
    static func count(_ line: LineFormat.Line, _ index: Int) -> Int? {
        line.integer(index, in: 0...FactValue.largestWhole)
    }

    static var validTimes: ClosedRange<Int> { StateFileFormat.validTimes }

    /// A portal URL comes from the network: percent-encoded so it stays one field.
    static func urlToken(_ url: String) -> String {
        let safe = PortalHints.safeURL(url)
        return safe.isEmpty ? "-" : safe
    }
}
