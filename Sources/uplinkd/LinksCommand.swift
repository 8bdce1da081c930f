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
        let early = ArgumentReader.readOptions(arguments, for: "links") { option, inline, reader throws(UsageError) in
            switch option {
            case "--json": parsed.json = true
            case "--all": parsed.all = true
            case "--watch": parsed.watch = true
            case "--verbose", "-v": Log.threshold = .info
            case "--config": parsed.configPath = try reader.value(for: option, inline: inline)
            default: return false
            }
            return true
        }
        if let early { return early }
        guard let configuration = loadConfigurationOrReport(explicitPath: parsed.configPath) else {
            return ExitStatus.configuration
        }
        let printer = LinkPrinter(configuration: configuration, json: parsed.json, all: parsed.all)
        if !parsed.watch {
            do {
                let links = try NetlinkSnapshot().links
                if printer.wantsModems(links) { printer.modems = try modemSnapshot() }
                printer.printAll(links)
            } catch {
                printError("\(error)")
                return ExitStatus.software
            }
            return 0
        }
        return watch(printer: printer, configuration: configuration)
    }

    /// ModemManager's modems, asked once.
    private static func modemSnapshot() throws -> [ModemFacts] {
        let loop = try EventLoop()
        var modems: [ModemFacts] = []
        ModemSnapshot.take(loop: loop) { modems = $0 }
        try loop.run()
        return modems
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
