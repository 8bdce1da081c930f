/// The state file (format 2): one named fact per line, so a POSIX shell reads any fact
/// with one `awk` or `grep` and no column counting. Node facts are `NAME VALUE`, an
/// uplink's facts `uplink IFACE NAME VALUE`, named as in `StateFacts`:
///
///     # uplinkd state, format 2 (see uplinkd-state(5))
///     format 2
///     written 1763733436
///     pid 4242
///     stopped no
///     primary eth0
///     ...
///     uplink eth0 kind ethernet
///     uplink eth0 verdict online
///     uplink wwan0 modem_operator Vodafone%20DE
///
/// A value is one field: `-` for none, `yes`/`no`, numbers, or text with spaces,
/// controls, `%` and non-ASCII bytes percent-encoded. Readers ignore facts they do not
/// know; new facts are only ever added.
package enum StateFileFormat {
    package static let version = 2
    package static let versions = 1...2

    package typealias DecodeError = LineFormat.DecodeError

    /// Seconds since the epoch that make sense (readers subtract them from now).
    static let validTimes = 0...(Int(Int32.max) * 64)

    /// The file in `format` (2, or 1 for readers not yet moved).
    package static func encode(_ state: AgentState, format: Int = version) -> String {
        guard format == version else { return StateFileFormat1.encode(state) }
        var text = "# uplinkd state, format \(version) (see uplinkd-state(5))\nformat \(version)\n"
        text.reserveCapacity(1_024 + 1_536 * state.uplinks.count)
        func line(_ parts: String...) {
            for part in parts { text += part }
            text += "\n"
        }
        for fact in StateFacts.node {
            line(fact.name, " ", fact.value(state).fileToken)
        }
        for uplink in state.uplinks {
            let prefix = "uplink " + uplink.interface.value + " "
            for fact in StateFacts.uplink {
                line(prefix, fact.name, " ", fact.value(uplink).fileToken)
            }
        }
        return text
    }

    /// Reads a file of either format.
    package static func decode(_ text: String) throws(DecodeError) -> AgentState {
        switch formatLine(of: text) {
        case 1: try StateFileFormat1.decode(text)
        default: try decode2(text)
        }
    }

    /// The number of the file's first `format` line (0: none, or not a number).
    static func formatLine(of text: String) -> Int {
        for row in text.split(separator: "\n") where row.hasPrefix("format ") {
            return Int(row.dropFirst("format ".count)) ?? 0
        }
        return 0
    }

    static func decode2(_ text: String) throws(DecodeError) -> AgentState {
        var state = AgentState(primary: nil, uplinks: [], writtenWallSeconds: 0, pid: 0)
        var order: [InterfaceName] = []
        var values: [InterfaceName: [String: FactValue]] = [:]
        var nodeFactsRead: Set<String> = []
        try LineFormat.read(text, version: version, fileKind: "state file") { line throws(DecodeError) in
            if line.keyword == "uplink" {
                guard line.fields.count == 4, let name = InterfaceName(line.fields[1]) else {
                    throw line.error("malformed uplink line: expected 'uplink IFACE FACT VALUE'")
                }
                let fact = line.fields[2]
                guard let kind = StateFacts.uplinkByName[fact]?.kind else { return }   // a fact of a later version
                guard let value = FactValue(fileToken: line.fields[3], kind: kind) else {
                    throw line.error("malformed value of \(fact.printableEscaped) for \(name.value)")
                }
                if values[name] == nil { order.append(name) }
                guard values[name]?[fact] == nil else { throw line.error("\(fact) of \(name.value) given twice") }
                values[name, default: [:]][fact] = value
                return
            }
            guard let fact = StateFacts.nodeByName[line.keyword] else { return }
            guard line.fields.count == 2, let value = FactValue(fileToken: line.fields[1], kind: fact.kind) else {
                throw line.error("malformed \(fact.name) line")
            }
            guard nodeFactsRead.insert(fact.name).inserted else { throw line.error("\(fact.name) given twice") }
            fact.restore?(&state, value)
        }
        for name in order {
            let facts = values[name]!
            for required in StateFacts.required.sorted() where facts[required]?.isNone ?? true {
                throw DecodeError(line: 0, message: "uplink \(name.value) has no \(required)")
            }
            state.uplinks.append(StateFacts.uplink(named: name, facts))
        }
        return state
    }
}
