/// The data plans' file (format 1): kept on persistent storage so counts survive
/// restarts and reboots, one line per uplink, whitespace-separated, "-" for none:
///
///     # uplinkd data plans, format 1 (see README, "Data plans")
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
            "# uplinkd data plans, format \(version) (see README, \"Data plans\")",
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

    package struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
        package let line: Int
        package let message: String
        package var description: String { "line \(line): \(message)" }
    }

    package static func decode(_ text: String) throws(DecodeError) -> [InterfaceName: PlanLedger] {
        var ledgers: [InterfaceName: PlanLedger] = [:]
        var sawFormat = false
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let fields = line.split(separator: " ").map(String.init)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            switch first {
            case "format":
                guard fields.count >= 2, Int(fields[1]) == version else {
                    throw DecodeError(line: lineNumber, message: "unsupported format '\(fields.dropFirst().joined(separator: " ").printableEscaped)'")
                }
                sawFormat = true
            case "plan":
                let (name, ledger) = try plan(fields, line: lineNumber)
                ledgers[name] = ledger
            default:
                continue   // "written", and lines of later versions
            }
        }
        guard sawFormat else { throw DecodeError(line: 0, message: "no 'format' line: not an uplinkd plan file") }
        return ledgers
    }

    /// What a cycle's count can hold: 2^56 bytes (64 PiB) is no cycle's traffic, and
    /// the sums and percentages made of it cannot overflow (a file altered to say more
    /// would otherwise trap the agent at every start).
    static let countedBytes = 0...(1 << 56)

    static func plan(_ fields: [String], line: Int) throws(DecodeError) -> (InterfaceName, PlanLedger) {
        guard fields.count >= 13, let name = InterfaceName(fields[1]), let start = Int(fields[2]),
              StateFileFormat.validTimes.contains(start), let received = Int(fields[3]),
              countedBytes.contains(received), let sent = Int(fields[4]), countedBytes.contains(sent) else {
            throw DecodeError(line: line, message: "malformed plan line")
        }
        var marks: [Int] = []
        if fields[5] != "-" {
            for word in fields[5].split(separator: ",") {
                guard let mark = Int(word), (1...100).contains(mark) else {
                    throw DecodeError(line: line, message: "malformed marks '\(fields[5].printableEscaped)'")
                }
                marks.append(mark)
            }
        }
        var account = TrafficAccount()
        if fields[6] != "-" {
            guard isToken(fields[6]), let index = Int(fields[7]), index > 0, let rx = UInt64(fields[8]),
                  let tx = UInt64(fields[9]), let rxPackets = UInt64(fields[10]), let txPackets = UInt64(fields[11]),
                  let header = Int(fields[12]), (0...64).contains(header) else {
                throw DecodeError(line: line, message: "malformed counter baseline")
            }
            account = TrafficAccount(baseline: CounterReading(
                device: DeviceIdentity(bootID: fields[6], index: index), receivedBytes: rx, transmittedBytes: tx,
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
