import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd links [--json] [--all] [--watch]`: the interfaces uplinkd sees, and with
/// --watch the link events as the kernel reports them.
enum LinksCommand {
    struct Arguments {
        var json = false
        var all = false
        var watch = false
        var configPath: String?
    }

    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var parsed = Arguments()
        var reader = ArgumentReader(arguments)
        do throws(UsageError) {
            while let (option, inline) = reader.next() {
                switch option {
                case "--json": parsed.json = true
                case "--all": parsed.all = true
                case "--watch": parsed.watch = true
                case "--verbose", "-v": Log.threshold = .info
                case "--config": parsed.configPath = try reader.value(for: option, inline: inline)
                case "--help", "-h":
                    print(helpText)
                    return 0
                default: throw UsageError("unknown argument '\(option.printableEscaped)' for links")
                }
            }
        } catch {
            return usageFailure(error.message)
        }
        guard let configuration = ConfigurationLoader.loadOrReport(explicitPath: parsed.configPath) else {
            return ExitStatus.configuration
        }
        let printer = LinkPrinter(configuration: configuration, json: parsed.json, all: parsed.all)
        if !parsed.watch {
            do {
                printer.printAll(try NetlinkSnapshot().links)
            } catch {
                printError("\(error)")
                return ExitStatus.software
            }
            return 0
        }
        return watch(printer: printer, configuration: configuration)
    }

    private static func watch(printer: LinkPrinter, configuration: Configuration) -> Int32 {
        do {
            let loop = try EventLoop()
            let signals = try SignalSource(loop: loop, signals: [SIGTERM, SIGINT]) { _ in loop.stop() }
            let tracker = try LinkTracker(loop: loop, receiveBufferBytes: configuration.netlinkReceiveBufferBytes) {
                events, resynced, links in
                printer.printEvents(events, resynced: resynced, current: links)
            }
            printer.printAll(tracker.links)
            printer.emit(JSONValue.object([("event", .string("ready"))]).serialized(), human: "-- watching for link events")
            try loop.run()
            withExtendedLifetime((signals, tracker)) {}
            return 0
        } catch {
            printError("watching links: \(error)")
            return ExitStatus.software
        }
    }
}

/// Prints interfaces and events in the chosen format, flushed line by line so a reader
/// of a pipe sees each event as it happens.
final class LinkPrinter {
    let configuration: Configuration
    let json: Bool
    let all: Bool
    let kindReader = SysfsKindReader()
    /// Indices of the interfaces that were uplinks after the last batch: an event is
    /// shown when its interface was an uplink before it *or* is one after it, so losing
    /// the default route (which ends "uplink" status in automatic mode) is still told.
    private var uplinkIndices: Set<Int> = []

    init(configuration: Configuration, json: Bool, all: Bool) {
        self.configuration = configuration
        self.json = json
        self.all = all
    }

    func kind(of facts: LinkFacts) -> InterfaceKind {
        kindReader.kind(of: facts.name, configured: configuration.interfaceKinds[facts.name.value])
    }

    func isUplink(_ facts: LinkFacts, kind: InterfaceKind) -> Bool {
        configuration.uplinkSelection.isUplink(facts, kind: kind)
    }

    func printAll(_ links: [Int: LinkFacts]) {
        for facts in links.values.sorted(by: { $0.index < $1.index }) {
            let kind = kind(of: facts)
            let uplink = isUplink(facts, kind: kind)
            if uplink { uplinkIndices.insert(facts.index) }
            guard uplink || all else { continue }
            emit(LinkReport.json(facts, kind: kind, isUplink: uplink).serialized(),
                 human: LinkReport.humanLine(facts, kind: kind, isUplink: uplink))
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

    func emit(_ jsonLine: String, human: String) {
        print(json ? jsonLine : human)
        fflush(stdout)
    }
}
