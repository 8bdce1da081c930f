import Glibc
import UplinkCore
import UplinkLinux
import UplinkTestSupport

// Fakes behind the agent's seams (AdapterProtocols.swift), so tests drive the real
// `Agent` on a real event loop with a manual clock, without root or a network.

/// Records probe requests; answers each one with the outcome set for its interface
/// (on the loop, as HTTPProber does), or leaves it pending when none is set.
final class FakeProber: ProbeSending {
    let loop: EventLoop
    var outcomes: [InterfaceName: ProbeOutcome] = [:]
    private(set) var requests: [ProbeRequest] = []
    private var pending: [(ProbeRequest, (ProbeResult) -> Void)] = []

    init(loop: EventLoop) { self.loop = loop }

    func send(_ request: ProbeRequest, settings: ProbeSettings, completion: @escaping (ProbeResult) -> Void) {
        requests.append(request)
        guard let outcome = outcomes[request.interface] else {
            pending.append((request, completion))
            return
        }
        loop.schedule(afterMilliseconds: 1) {
            completion(ProbeResult(request: request, outcome: outcome, elapsedMilliseconds: 1, bytes: 300))
        }
    }

    func requests(on name: InterfaceName) -> Int { requests.filter { $0.interface == name }.count }
}

/// Never asked in these tests (the probes are IP literals): any call is a test bug.
final class UnusedResolver: NameResolving {
    private(set) var calls = 0
    func resolve(_ name: String, family: AddressFamily, interface: InterfaceName?, servers: [IPAddress],
                 timeoutMilliseconds: Int, completion: @escaping (DNSLookup) -> Void) {
        calls += 1
    }
}

/// Records hook events. `hold()` keeps the current event "running" until `finish()`,
/// the way a slow hook keeps the runner busy.
final class RecordingHooks: HookSink {
    var onEventFinished: ((HookEvent) -> Void)?
    private(set) var events: [HookEvent] = []
    private(set) var directory = ""
    private var holding = false
    /// Where the events held since `hold()` start.
    private var heldFrom = 0
    private var drained: (() -> Void)?

    var pendingEvents: Int { holding ? 1 : 0 }

    func caughtUp(latest: Int) -> Int {
        guard holding, let oldest = events[min(heldFrom, events.count)...].map(\.decision).min() else { return latest }
        return oldest - 1
    }

    func enqueue(_ event: HookEvent) {
        events.append(event)
        if !holding { onEventFinished?(event) }
    }

    /// Later events stay "running" until `finish()`.
    func hold() {
        holding = true
        heldFrom = events.count
    }

    /// The held events end, in order: the agent hears of each, and a waiting drain
    /// completes.
    func finish() {
        holding = false
        for event in events[min(heldFrom, events.count)...] { onEventFinished?(event) }
        drained?()
        drained = nil
    }

    func drain(finalEvent: HookEvent?, then completion: @escaping () -> Void) {
        let finish = { [unowned self] in
            if let finalEvent { events.append(finalEvent) }
            completion()
        }
        if holding { drained = finish } else { finish() }
    }

    func reconfigure(directories: HookDirectories, timeoutMilliseconds: Int) { directory = directories.directory }
}

/// Counts sysfs reads per name.
final class CountingKinds: KindReading {
    private(set) var reads: [InterfaceName: Int] = [:]
    func kind(of name: InterfaceName, configured: InterfaceKind?) -> InterfaceKind {
        reads[name, default: 0] += 1
        return configured ?? KindClassifier.fromName(name) ?? .other
    }
}

/// The host's network files as the test says: which uplinks are metered by their
/// lease; no DNS servers (the probes are IP literals) and no captive-portal API.
final class FakeNetworkFiles: NetworkFileReading {
    var metered: Set<InterfaceName> = []
    private(set) var serverLookups = 0
    func dnsServers(for name: InterfaceName, index: Int, configured: [IPAddress]?, settings: DNSSettings) -> DNSServers {
        serverLookups += 1
        return .none
    }
    func captivePortalAPI(for name: InterfaceName, index: Int, settings: DNSSettings) -> ProbeURL? { nil }
    func leaseSaysMetered(_ name: InterfaceName, index: Int, settings: DNSSettings) -> Bool { metered.contains(name) }
}

/// Validators as the test says: every answer of a probe with a validator is accepted,
/// and counted.
final class FakeValidator: AnswerValidating {
    private(set) var validated = 0
    func validate(_ result: ProbeResult, timeoutMilliseconds: Int, completion: @escaping (ProbeResult) -> Void) {
        guard result.request.probe.expectation.validator != nil, case .response(var response) = result.outcome else {
            return completion(result)
        }
        validated += 1
        response.validatorAccepted = true
        var accepted = result
        accepted.outcome = .response(response)
        completion(accepted)
    }
}

/// Packet counters the test moves by hand.
final class FakeTraffic: TrafficCounting {
    var counters: [InterfaceName: (received: UInt64, transmitted: UInt64)] = [:]
    private(set) var samples: [InterfaceName: Int] = [:]

    func packets(of name: InterfaceName) -> (received: UInt64, transmitted: UInt64)? {
        samples[name, default: 0] += 1
        return counters[name]
    }

    /// Packets leave (and, when `answered`, as many come back).
    func send(_ packets: UInt64, on name: InterfaceName, answered: Bool) {
        let now = counters[name] ?? (0, 0)
        counters[name] = (now.received + (answered ? packets : 0), now.transmitted + packets)
    }
}

/// Links the test changes by hand; each `set` is one netlink batch. uplinkd's own
/// rules and routes are lists the test edits (`changeRouting`), as another tool would.
final class FakeLinks: LinkSource {
    private(set) var links: [Int: LinkFacts]
    var handler: LinkHandler?
    var rules: [RoutingRule] = []
    var routes: [OwnedRoute] = []
    private(set) var removals = 0
    private var routingHandler: (() -> Void)?

    func routingEntries(_ settings: RoutingSettings) -> (rules: [RoutingRule], routes: [OwnedRoute]) {
        (rules.filter(settings.owns), routes.filter(settings.owns))
    }

    func watchRouting(_ handler: @escaping () -> Void) { routingHandler = handler }

    func removeRouting(_ settings: RoutingSettings) throws(NetlinkError) -> [String] {
        removals += 1
        let gone = rules.filter(settings.owns).map(\.description) + routes.filter(settings.owns).map(\.description)
        rules.removeAll(where: settings.owns)
        routes.removeAll(where: settings.owns)
        return gone
    }

    /// One netlink batch that changed rules or routes.
    func changeRouting(_ change: (FakeLinks) -> Void) {
        change(self)
        routingHandler?()
    }

    init(_ facts: [LinkFacts]) {
        links = Dictionary(uniqueKeysWithValues: facts.map { ($0.index, $0) })
    }

    func set(_ facts: [LinkFacts]) {
        let new = Dictionary(uniqueKeysWithValues: facts.map { ($0.index, $0) })
        let events = LinkDiff.events(from: links, to: new)
        links = new
        handler?(events, false, new)
    }
}

/// An agent wired to the fakes on a manual clock, and what it published.
final class AgentHarness {
    let time = ManualTimeSource()
    let loop: EventLoop
    let prober: FakeProber
    let resolver = UnusedResolver()
    let hooks = RecordingHooks()
    let kinds = CountingKinds()
    let files = FakeNetworkFiles()
    let validator = FakeValidator()
    let traffic = FakeTraffic()
    let links: FakeLinks
    let agent: Agent
    private(set) var states: [AgentState] = []

    init(_ facts: [LinkFacts], configuration: Configuration = AgentHarness.configuration(),
         options: Agent.Options = AgentHarness.options(), loader: ConfigurationLoader? = nil) throws {
        loop = try EventLoop(time: time)
        prober = FakeProber(loop: loop)
        let links = FakeLinks(facts)
        self.links = links
        let adapters = AgentAdapters(prober: prober, resolver: resolver, hooks: hooks, kinds: kinds, files: files,
                                     validator: validator, traffic: traffic) { _, _, handler in
            links.handler = handler
            return links
        }
        agent = Agent(configuration: configuration, options: options, loader: loader, loop: loop, adapters: adapters)
        agent.observe { [unowned self] state, _ in states.append(state) }
    }

    var state: AgentState? { states.last }

    func verdict(_ name: InterfaceName) -> Verdict? {
        state?.uplinks.first { $0.interface == name }?.verdict
    }

    func advance(_ milliseconds: Int) throws { try loop.advance(byMilliseconds: milliseconds) }

    /// One IP-literal probe (no DNS), 60 s between rounds, decisions at once, no
    /// stall detection (tests that want it switch it on).
    static func configuration(_ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var configuration = Configuration()
        configuration.useDefaultProbes = false
        configuration.customProbes = [ProbeSpec(name: "lab", url: try! ProbeURL(parsing: "http://192.0.2.80/generate_204"),
                                                expectation: Expectation(status: 204))]
        configuration.probing.intervalMilliseconds = 60_000
        configuration.probing.failuresToLeaveOnline = 1
        configuration.probing.successesToReturnOnline = 1
        configuration.probing.stallWindow = .off
        configuration.probing.livenessInterval = .off
        configuration.agent.holdDownMilliseconds = 0
        change(&configuration)
        return configuration
    }

    static func options(stateFile: String? = nil) -> Agent.Options {
        var options = Agent.Options(stateFileOverride: stateFile)
        options.handleSignals = false
        options.writeStateFile = stateFile != nil
        return options
    }
}

let validated = ProbeOutcome.response(ProbeResponse(status: 204))
let portal = ProbeOutcome.response(ProbeResponse(status: 302, location: "http://portal.example/login"))

/// A temporary directory, removed with its files by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/uplinkd-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw SystemError("mkdtemp") }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func write(_ name: String, _ text: String) throws {
        let file = try FileDescriptor.open("\(path)/\(name)", O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        try file.writeAll(Array(text.utf8))
    }

    func read(_ name: String) -> String? { SmallFile.read("\(path)/\(name)", limit: 65_536) }

    func remove() {
        for name in (try? SmallFile.directoryEntries(path)) ?? [] { unlink("\(path)/\(name)") }
        rmdir(path)
    }
}
