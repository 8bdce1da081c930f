/// A record as `uplinkd history --json` prints it and MQTT delivers it: the line's
/// facts under the same names, lists as arrays and objects.
extension JournalRecord {
    package var json: JSONValue {
        let record = self
        var members: [(String, JSONValue)] = [("kind", .string(record.kind.rawValue))]
        if let sequence = record.sequence { members.append(("seq", .int(sequence))) }
        if let interface = record.interface { members.append(("interface", .string(interface.value))) }
        members += [("start", .int(record.start.wallSeconds)), ("end", .int(record.end.wallSeconds)),
                    ("duration_ms", .int(record.durationMilliseconds)),
                    ("clock_synced", .bool(record.start.synced && record.end.synced)),
                    ("reasons", .array(record.reasons.map {
                        .object([("interface", .string($0.interface.value)), ("reason", .string($0.reason.rawValue))])
                    })),
                    ("primary_before", record.primaryBefore.map { .string($0.value) } ?? .null),
                    ("primary_after", record.primaryAfter.map { .string($0.value) } ?? .null)]
        if let reason = record.primaryReason { members.append(("primary_reason", .string(reason.rawValue))) }
        if let detection = record.detectionMilliseconds { members.append(("detection_ms", .int(detection))) }
        func counts(_ values: [InterfaceName: Int]) -> JSONValue {
            .object(values.keys.sorted().map { ($0.value, .int(values[$0]!)) })
        }
        if !record.recoverySteps.isEmpty { members.append(("recovery_steps", counts(record.recoverySteps))) }
        if !record.bytes.isEmpty { members.append(("bytes", counts(record.bytes))) }
        if let cause = record.cause { members.append(("cause", .string(cause.rawValue))) }
        if let uncertainty = record.uncertaintySeconds { members.append(("uncertainty_seconds", .int(uncertainty))) }
        if let count = record.droppedCount { members.append(("count", .int(count))) }
        if record.ongoing { members.append(("ongoing", .bool(true))) }
        return .object(members)
    }
}
