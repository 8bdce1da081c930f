import UplinkCore

/// Runs `uplinkd check`: reads link facts once, then runs one round per named
/// interface, all in parallel on one loop, with the same round runner as the agent.
public final class CheckRunner {
    public let configuration: Configuration
    public let kindReader: KindReading

    public init(configuration: Configuration, kindReader: KindReading = SysfsKindReader()) {
        self.configuration = configuration
        self.kindReader = kindReader
    }

    public func run(_ interfaces: [InterfaceName]) throws(AdapterError) -> [CheckReport] {
        let loop: EventLoop
        do { loop = try EventLoop() } catch { throw .system(error) }
        let started = loop.nowMilliseconds
        let snapshot: NetlinkSnapshot
        let prober: HTTPProber
        do { snapshot = try NetlinkSnapshot() } catch { throw .netlink(error) }
        do { prober = try HTTPProber(loop: loop) } catch { throw .curl(error) }
        let rounds = RoundRunner(loop: loop, prober: prober, resolver: DNSResolver(loop: loop))

        var reports: [CheckReport?] = Array(repeating: nil, count: interfaces.count)
        for (position, name) in interfaces.enumerated() {
            let facts = snapshot.facts(for: name)
            let plan = RoundPlan.check(configuration, interface: name, index: facts?.index ?? 0,
                                       kind: kindReader.kind(of: name, configured: configuration.configuredKind(of: name)),
                                       link: LinkEvaluator.evaluate(facts))
            rounds.run(plan, configuration: configuration, startedMilliseconds: started) { report in
                reports[position] = report
            }
        }
        do { try loop.run() } catch { throw .system(error) }
        // The loop returns only when nothing is in flight, so every report is there.
        return reports.compactMap { $0 }
    }
}
