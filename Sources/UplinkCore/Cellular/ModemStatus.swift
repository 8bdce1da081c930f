/// A modem's figures as the agent publishes them beside the uplink it carries: in
/// `status`, `status --json` and `check --json` (`modem`), the state file's appended
/// columns, the Prometheus textfile and the hook environment (`UPLINK_MODEM_*`).
package struct ModemStatus: Sendable, Equatable {
    package var equipmentID: String
    package var state: ModemState
    package var registration: RegistrationState?
    package var operatorName: String?
    package var operatorCode: String?
    package var accessTechnologies: AccessTechnologies
    package var signal: SignalFigures
    package var signalQualityPercent: Int?
    /// The highest recovery step of the current episode; nil: none.
    package var recoveryStep: RecoveryStep?
    /// Recovery steps taken since the agent started.
    package var recoveriesTotal: Int

    package init(_ facts: ModemFacts, recoveryStep: RecoveryStep? = nil, recoveriesTotal: Int = 0) {
        equipmentID = facts.equipmentID
        state = facts.state
        registration = facts.registration
        operatorName = facts.operatorName
        operatorCode = facts.operatorCode
        accessTechnologies = facts.accessTechnologies
        signal = facts.signal
        signalQualityPercent = facts.signalQualityPercent
        self.recoveryStep = recoveryStep
        self.recoveriesTotal = recoveriesTotal
    }

    /// A figure in tenths, as the outputs print it (-98.5).
    static func tenths(_ value: Double?) -> Int? {
        guard let value, value.isFinite, abs(value) < 1_000_000 else { return nil }
        return Int((value * 10).rounded())
    }

    package var json: JSONValue {
        func figure(_ value: Double?) -> JSONValue { ModemStatus.tenths(value).map { .fixed($0, scale: 1) } ?? .null }
        return .object([
            ("equipment_id", .string(equipmentID)),
            ("state", .string(state.name)),
            ("registration", .optional(registration?.name)),
            ("operator", .optional(operatorName)),
            ("operator_code", .optional(operatorCode)),
            ("access_technology", .optional(accessTechnologies.isEmpty ? nil : accessTechnologies.names)),
            ("rsrp_dbm", figure(signal.rsrpDBm)),
            ("rsrq_db", figure(signal.rsrqDB)),
            ("sinr_db", figure(signal.sinrDB)),
            ("rssi_dbm", figure(signal.rssiDBm)),
            ("signal_quality_pct", signalQualityPercent.map(JSONValue.int) ?? .null),
            ("recovery_step", .optional(recoveryStep?.rawValue)),
            ("recoveries_total", .int(recoveriesTotal)),
        ])
    }

    /// The short clause `uplinkd status` prints: "modem registered home, lte, -98.5 dBm".
    package var summary: String {
        var parts = ["modem \(state.name)" + (registration.map { " \($0.name)" } ?? "")]
        if let operatorName, !operatorName.isEmpty { parts.append(operatorName.printableEscaped) }
        if !accessTechnologies.isEmpty { parts.append(accessTechnologies.names) }
        if let rsrp = ModemStatus.tenths(signal.rsrpDBm) {
            parts.append("RSRP \(PrometheusText.decimal(rsrp, scale: 1)) dBm")
        } else if let quality = signalQualityPercent {
            parts.append("signal \(quality)%")
        }
        if let recoveryStep { parts.append("recovery: \(recoveryStep.rawValue) (\(recoveriesTotal) in all)") }
        return parts.joined(separator: ", ")
    }
}
