import Testing
import UplinkCore
import UplinkTestSupport

/// The core tests' one harness: drives an `AgentCore` the way the agent does. Either
/// it answers each round it starts from a script (per uplink, whether its probes
/// validate, how long they take, what DNS answered; `answerAll`, `advance`), or a test
/// steps it by hand, answering one round at a time with a verdict of its choosing
/// (`finish`, `tick`). Keeps every plan and hook event it saw, so tests can ask what
/// was sent and told.
struct CoreDriver {
    var core: AgentCore
    var now = 0
    /// Per uplink: probes that fail (by name), or everything (`dead`).
    var failing: [InterfaceName: Set<String>] = [:]
    var dead: Set<InterfaceName> = []
    /// Per uplink: probes that fail over IPv6 only (a name without an AAAA record).
    var failingOverIPv6: [InterfaceName: Set<String>] = [:]
    /// Uplinks that connect but answer too slowly for a time limit under `slowMilliseconds`.
    var slow: Set<InterfaceName> = []
    var slowMilliseconds = 2_000
    /// Uplinks whose failing probes connect and then time out (a lossy or overloaded
    /// path, not a dead one).
    var stalling: Set<InterfaceName> = []
    /// Per uplink: the share of probes whose first SYN is lost (picked by a fixed
    /// hash of the time and the probe, so a run repeats): they connect on the
    /// retransmission a second later, or time out unconnected under a shorter limit.
    var firstSYNLossPercent: [InterfaceName: Int] = [:]
    var exchangeMilliseconds = 3
    var lookupMilliseconds = 2
    var ttlSeconds = 300
    /// What each uplink's captive-portal API answers in full rounds, if it has one.
    var captivePortal: [InterfaceName: CaptivePortalStatus] = [:]
    /// Uplinks whose probes are all answered with a 302 to this Location (a portal).
    var redirecting: [InterfaceName: String] = [:]
    private(set) var plans: [RoundPlan] = []
    private(set) var hooks: [HookEvent] = []
    private(set) var notes: [AgentNote] = []
    /// Recovery steps the core asked the modem adapter to take.
    private(set) var recoveries: [(equipmentID: String, step: RecoveryStep, at: Int)] = []
    /// Times the core asked for the data plans to be written.
    private(set) var planSaves = 0
    /// Bearers the core asked to connect (true) or disconnect (false) for a cold standby.
    private(set) var bearerSteps: [(equipmentID: String, connected: Bool, at: Int)] = []
    private var inFlight: [(plan: RoundPlan, generation: Int)] = []

    init(_ configuration: Configuration) {
        core = AgentCore(configuration: configuration)
    }

    /// The probe set these tests use: five probes with host names, like the built-ins.
    static func probes() -> [ProbeSpec] {
        ["apple", "google", "firefox", "microsoft", "debian"].map { name in
            ProbeSpec(name: name, url: try! ProbeURL(parsing: "http://\(name).example/check"), expectation: Expectation(status: 204))
        }
    }

    /// The configuration most suites count rounds against: unmetered uplinks get a
    /// light round every 10 s and no liveness rounds in between (the rounds' mechanics
    /// read plainly at that pace); `LivenessTests` test the built-in cadence.
    static func configuration(_ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var configuration = Configuration()
        configuration.useDefaultProbes = false
        configuration.customProbes = probes()
        configuration.agent.holdDownMilliseconds = 0
        var unmetered = ProbingOverrides()
        unmetered.intervalMilliseconds = 10_000
        unmetered.livenessInterval = .off
        for kind in [InterfaceKind.ethernet, .wifi, .other] { configuration.kinds[kind] = unmetered }
        change(&configuration)
        return configuration
    }

    var instant: Instant { at(now) }

    mutating func take(_ actions: [AgentCore.Action]) {
        for action in actions {
            switch action {
            case .startRound(let plan, let generation):
                plans.append(plan)
                inFlight.append((plan, generation))
            case .runHook(let event):
                hooks.append(event)
            case .note(let note):
                notes.append(note)
            case .recoverModem(let id, let step):
                recoveries.append((id, step, now))
            case .savePlans:
                planSaves += 1
            case .standbyBearer(let id, let connected):
                bearerSteps.append((id, connected, now))
            }
        }
    }

    /// The uplinks as they are now (at `time`, else the driver's `now`); returns the
    /// step's actions.
    @discardableResult
    mutating func links(_ uplinks: [ObservedUplink], events: [LinkEvent] = [], at time: Int? = nil) -> [AgentCore.Action] {
        if let time { now = time }
        let actions = core.linksChanged(uplinks: uplinks, events: events, now: instant)
        take(actions)
        return actions
    }

    /// What ModemManager says now (at `time`, else the driver's `now`); returns the
    /// step's actions.
    @discardableResult
    mutating func modems(_ modems: [ModemFacts], at time: Int? = nil) -> [AgentCore.Action] {
        if let time { now = time }
        let actions = core.modemsChanged(modems, now: instant)
        take(actions)
        return actions
    }

    /// The rounds in flight, oldest first.
    var inFlightRounds: [(interface: InterfaceName, purpose: RoundPurpose, generation: Int)] {
        inFlight.map { ($0.plan.interface, $0.plan.purpose, $0.generation) }
    }

    /// Answers the oldest round in flight on `name` at `time` with one probe judged as
    /// `assessment` says, costing `bytes`; returns the step's actions. A round of an
    /// uplink that vanished since is still answered with its own generation.
    @discardableResult
    mutating func finish(_ name: InterfaceName, _ assessment: Assessment, bytes: Int = 500, at time: Int) -> [AgentCore.Action] {
        guard let index = inFlight.firstIndex(where: { $0.plan.interface == name }) else {
            Issue.record("no round in flight on \(name)")
            return []
        }
        let (plan, generation) = inFlight.remove(at: index)
        now = time
        var report = RoundReport(interface: name, kind: plan.kind, assessment: assessment, families: [.ipv4: assessment],
                                 probes: [ProbeReport(name: "a", url: "http://x/", family: .ipv4,
                                                      judgement: assessment.verdict == .online ? .valid : .broken(reason: .timeout),
                                                      status: 204, elapsedMilliseconds: 1, bytes: bytes)],
                                 elapsedMilliseconds: 1)
        report.purpose = plan.purpose
        let actions = core.roundFinished(report, generation: generation, now: instant)
        take(actions)
        return actions
    }

    /// The core's wake-up at `time`, without answering what it starts; returns the
    /// step's actions.
    @discardableResult
    mutating func tick(at time: Int) -> [AgentCore.Action] {
        now = time
        let actions = core.tick(now: instant)
        take(actions)
        return actions
    }

    /// Answers every round in flight (in order), as many times as new ones start
    /// right away, each taking `exchangeMilliseconds` of nobody's time.
    mutating func answerAll(limit: Int = 20) {
        var answered = 0
        while !inFlight.isEmpty && answered < limit {
            let (plan, generation) = inFlight.removeFirst()
            take(core.roundFinished(report(for: plan), generation: generation, now: instant))
            answered += 1
        }
    }

    /// Moves time on, ticking where the core asked to be woken and answering rounds.
    mutating func advance(to time: Int) {
        while let wake = core.nextWakeMilliseconds(), wake <= time, wake >= now {
            now = wake
            take(core.tick(now: instant))
            answerAll()
            if core.nextWakeMilliseconds() == wake { break }
        }
        now = time
        take(core.tick(now: instant))
        answerAll()
    }

    func report(for plan: RoundPlan) -> RoundReport {
        let families: [AddressFamily]
        if case .probe(let probed) = plan.link { families = probed } else { families = [] }
        var results: [ProbeResult] = []
        for family in families {
            for (index, probe) in plan.probes(for: family).enumerated() {
                let tooSlow = slow.contains(plan.interface) && plan.timeoutMilliseconds < slowMilliseconds
                let retransmitted = Self.draw(now, index) % 100 < firstSYNLossPercent[plan.interface, default: 0]
                let retransmittedConnectMilliseconds = HandshakeSample.firstRetransmissionMilliseconds + exchangeMilliseconds
                let fails = dead.contains(plan.interface) || failing[plan.interface, default: []].contains(probe.name)
                    || (family == .ipv6 && failingOverIPv6[plan.interface, default: []].contains(probe.name)) || tooSlow
                    || (retransmitted && plan.timeoutMilliseconds <= retransmittedConnectMilliseconds + exchangeMilliseconds)
                var request = ProbeRequest(interface: plan.interface, family: family, probe: probe)
                let key = DNSAnswerCache.Key(host: probe.url.host, family: family)
                let cached = plan.cachedAnswers[key]
                request.addresses = cached ?? [IPAddress("203.0.113.80")!]
                var outcome: ProbeOutcome = fails ? .failure(.timeout) : .response(ProbeResponse(status: 204))
                if !fails, let location = redirecting[plan.interface] {
                    outcome = .response(ProbeResponse(status: 302, location: location))
                }
                let lookup = cached == nil ? lookupMilliseconds : nil
                let exchange = fails ? plan.timeoutMilliseconds
                    : retransmitted ? retransmittedConnectMilliseconds + exchangeMilliseconds : exchangeMilliseconds
                var result = ProbeResult(request: request, outcome: outcome, elapsedMilliseconds: exchange + (lookup ?? 0),
                                         bytes: cached == nil ? 1_200 : 1_000, dnsMilliseconds: lookup,
                                         dnsTTLSeconds: lookup.map { _ in ttlSeconds })
                result.connected = !fails || tooSlow || stalling.contains(plan.interface)
                // The handshake takes a round trip of the exchange's time.
                if result.connected {
                    result.connectMilliseconds = retransmitted ? retransmittedConnectMilliseconds : min(exchangeMilliseconds, 1)
                }
                results.append(result)
            }
        }
        let api = plan.purpose == .full ? captivePortal[plan.interface].map {
            CaptivePortalCheck(uri: try! ProbeURL(parsing: "https://capport.example/api"), status: $0, bytes: 800)
        } : nil
        var report = RoundJudge.report(interface: plan.interface, kind: plan.kind, link: plan.link, results: results,
                                         thresholdPercent: plan.thresholdPercent, elapsedMilliseconds: 5,
                                         captivePortal: api)
        report.purpose = plan.purpose
        return report
    }

    /// A fixed pseudo-random number for a probe of a round started at `milliseconds`
    /// (SplitMix64's finalizer).
    private static func draw(_ milliseconds: Int, _ index: Int) -> UInt64 {
        var z = UInt64(truncatingIfNeeded: milliseconds) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    func plans(of name: InterfaceName, _ purpose: RoundPurpose? = nil) -> [RoundPlan] {
        plans.filter { $0.interface == name && (purpose == nil || $0.purpose == purpose) }
    }

    var primaryChanges: [InterfaceName?] { hooks.filter { $0.kind == .primary }.map(\.primary) }
}

extension [AgentCore.Action] {
    /// The rounds these actions start, by interface.
    var rounds: [InterfaceName: RoundPurpose] {
        var result: [InterfaceName: RoundPurpose] = [:]
        for case .startRound(let plan, _) in self { result[plan.interface] = plan.purpose }
        return result
    }

    var hooks: [HookEvent] {
        compactMap { if case .runHook(let event) = $0 { return event } else { return nil } }
    }
}

func uplink(_ name: InterfaceName, index: Int, kind: InterfaceKind, carrier: Bool = true) -> ObservedUplink {
    ObservedUplink(facts: usableLink(name, index: index, carrier: carrier), kind: kind)
}

/// An uplink with IPv4 and IPv6 addresses and default routes.
func dualStack(_ name: InterfaceName, index: Int, kind: InterfaceKind) -> ObservedUplink {
    ObservedUplink(facts: link(name, index: index, addresses: [address("10.0.\(index).2", 24), address("2001:db8:\(index)::2", 64)],
                               routes: [defaultRoute(.ipv4, via: "10.0.\(index).1"), defaultRoute(.ipv6, via: "fe80::1")]),
                   kind: kind)
}
