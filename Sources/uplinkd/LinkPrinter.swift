import Glibc
import UplinkCore
import UplinkLinux

/// Prints interfaces and events in the chosen format, a line at a time.
final class LinkPrinter {
    let configuration: Configuration
    let json: Bool
    let all: Bool
    let kindReader = SysfsKindReader()
    /// Indices of the interfaces that were uplinks after the last batch: an event is
    /// shown when its interface was an uplink before it *or* is one after it, so losing
    /// the default route (which ends "uplink" status in automatic mode) is still told.
    private var uplinkIndices: Set<Int> = []
    /// ModemManager's modems, shown beside the interfaces they carry.
    var modems: [ModemFacts] = []

    init(configuration: Configuration, json: Bool, all: Bool) {
        self.configuration = configuration
        self.json = json
        self.all = all
    }

    func kind(of facts: LinkFacts) -> InterfaceKind {
        kindReader.kind(of: facts.name, configured: configuration.configuredKind(of: facts.name))
    }

    func isUplink(_ facts: LinkFacts, kind: InterfaceKind) -> Bool {
        configuration.uplinkSelection.isUplink(facts, kind: kind)
    }

    /// Whether ModemManager is worth asking about any of these links (`ModemSettings`).
    func wantsModems(_ links: [Int: LinkFacts]) -> Bool {
        links.values.contains { facts in
            configuration.agent.modems.wantsModem(kind: kind(of: facts), binding: configuration.interfaces[facts.name]?.modem)
        }
    }

    func printAll(_ links: [Int: LinkFacts]) {
        for facts in links.values.sorted(by: { $0.index < $1.index }) {
            let kind = kind(of: facts)
            let uplink = isUplink(facts, kind: kind)
            if uplink { uplinkIndices.insert(facts.index) }
            guard uplink || all else { continue }
            let modem = ModemFacts.carrying(facts.name, binding: configuration.interfaces[facts.name]?.modem, among: modems)
                .map { ModemStatus($0) }
            var json = LinkReport.json(facts, kind: kind, isUplink: uplink)
            if case .object(var members) = json {
                members.append(("modem", modem?.json ?? .null))
                json = .object(members)
            }
            emit(json.serialized(),
                 human: LinkReport.humanLine(facts, kind: kind, isUplink: uplink) + (modem.map { "  " + $0.summary } ?? ""))
        }
    }

    func printEvents(_ events: [LinkEvent], resynced: Bool, current: [Int: LinkFacts]) {
        if resynced {
            emit(JSONValue.object([("event", .string("resync"))]).serialized(),
                 human: "-- netlink overflow: re-read everything; changes found follow")
        }
        for event in events {
            let facts = event.facts
            let kind = kind(of: facts)
            // A vanished interface has no sysfs entry left; judge it by its last facts.
            guard all || uplinkIndices.contains(facts.index) || isUplink(facts, kind: kind) else { continue }
            emit(LinkReport.json(event, kind: kind).serialized(), human: LinkReport.humanLine(event))
        }
        uplinkIndices = Set(current.values.filter { isUplink($0, kind: kind(of: $0)) }.map(\.index))
    }

    /// One line straight to standard output (no stdio buffer), so a reader of a pipe
    /// sees each event as it happens.
    func emit(_ jsonLine: String, human: String) {
        let line = Array(((json ? jsonLine : human) + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }
}
