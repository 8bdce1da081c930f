/// The data plans' file (format 1): kept on persistent storage so counts survive
/// restarts and reboots, one line per uplink, whitespace-separated, "-" for none:
///
///     # uplinkd data plans, format 1 (see uplinkd(8), DATA PLANS)
///     # plan NAME CYCLE-START RECEIVED SENT MARKS BOOT-ID IFINDEX RX-BYTES TX-BYTES RX-PACKETS TX-PACKETS HEADER
///     format 1
///     written 1800000000
///     plan wwan0 1799712000 81234567 9876543 75 5f1c0c7e-5d3a-4b2e-9a55-1c2d3e4f5a6b 7 90234567 10876543 71234 40234 0
///
/// CYCLE-START is when the cycle began (seconds since the epoch), RECEIVED and SENT the
/// IP bytes counted in it, MARKS the warning marks told (comma-separated), and the
/// rest the counter reading the next one is compared with (the device's boot id and
/// index, its byte and packet counters, the link-layer header per packet).
package enum PlanFileFormat {
    package static let version = 1
    package static let columns = "plan NAME CYCLE-START RECEIVED SENT MARKS BOOT-ID IFINDEX RX-BYTES TX-BYTES RX-PACKETS TX-PACKETS HEADER"

    package static func encode(_ ledgers: [InterfaceName: PlanLedger], writtenWallSeconds: Int) -> String {
        var lines = [
            "# uplinkd data plans, format \(version) (see uplinkd(8), DATA PLANS)",
            "# \(columns)",
            "format \(version)",
            "written \(writtenWallSeconds)",
        ]
        for name in ledgers.keys.sorted() {
            let ledger = ledgers[name]!
            var fields = [
                "plan", name.value, String(ledger.cycleStartWallSeconds), String(ledger.used.received),
                String(ledger.used.transmitted), ledger.marksTold.isEmpty ? "-" : ledger.marksTold.map(String.init).joined(separator: ","),
            ]
            if let base = ledger.account.baseline, isToken(base.device.bootID) {
                fields += [base.device.bootID, String(base.device.index), String(base.receivedBytes),
                           String(base.transmittedBytes), String(base.receivedPackets), String(base.transmittedPackets),
                           String(base.headerBytes)]
            } else {
                fields += Array(repeating: "-", count: 7)
            }
            lines.append(fields.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    package typealias DecodeError = LineFormat.DecodeError

    package static func decode(_ text: String) throws(DecodeError) -> [InterfaceName: PlanLedger] {
        var ledgers: [InterfaceName: PlanLedger] = [:]
        try LineFormat.read(text, version: version, fileKind: "plan file") { line throws(DecodeError) in
            guard line.keyword == "plan" else { return }   // "written", and lines of later versions
            let (name, ledger) = try plan(line)
            ledgers[name] = ledger
        }
        return ledgers
    }

    /// What a cycle's count can hold: 2^56 bytes (64 PiB) is no cycle's traffic, and
    /// the sums and percentages made of it cannot overflow (a file altered to say more
    /// would otherwise trap the agent at every start).
    static let countedBytes = 0...(1 << 56)

    static func plan(_ line: LineFormat.Line) throws(DecodeError) -> (InterfaceName, PlanLedger) {
        try line.requireFields(atLeast: 13, else: "malformed plan line")
        guard let name = InterfaceName(line.fields[1]), let start = line.integer(2, in: StateFileFormat.validTimes),
              let received = line.integer(3, in: countedBytes), let sent = line.integer(4, in: countedBytes) else {
            throw line.error("malformed plan line")
        }
        var marks: [Int] = []
        if let text = line.optionalField(5) {
            for word in text.split(separator: ",") {
                guard let mark = Int(word), (1...100).contains(mark) else {
                    throw line.error("malformed marks '\(text.printableEscaped)'")
                }
                marks.append(mark)
            }
        }
        var account = TrafficAccount()
        if let bootID = line.optionalField(6) {
            let counter = 0...UInt64.max
            guard isToken(bootID), let index = line.integer(7, in: 1...Int.max), let rx = line.integer(8, in: counter),
                  let tx = line.integer(9, in: counter), let rxPackets = line.integer(10, in: counter),
                  let txPackets = line.integer(11, in: counter), let header = line.integer(12, in: 0...64) else {
                throw line.error("malformed counter baseline")
            }
            account = TrafficAccount(baseline: CounterReading(
                device: DeviceIdentity(bootID: bootID, index: index), receivedBytes: rx, transmittedBytes: tx,
                receivedPackets: rxPackets, transmittedPackets: txPackets, headerBytes: header))
        }
        return (name, PlanLedger(cycleStartWallSeconds: start, used: ByteCounts(received: received, transmitted: sent),
                                 marksTold: marks.sorted(), account: account))
    }

    /// A boot id stays one field: letters, digits and dashes only.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text != "-"
            && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}
