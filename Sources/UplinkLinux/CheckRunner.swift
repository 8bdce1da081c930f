import Glibc
import UplinkCore

/// Runs `uplinkd check`: reads link facts once, probes every usable interface and
/// family in parallel, then lets the core decide.
public final class CheckRunner {
    public let configuration: Configuration
    public let kindReader: SysfsKindReader

    public init(configuration: Configuration, kindReader: SysfsKindReader = SysfsKindReader()) {
        self.configuration = configuration
        self.kindReader = kindReader
    }

    public func run(_ interfaces: [InterfaceName]) throws(AdapterError) -> [CheckReport] {
        let start = MonotonicClock.nowMilliseconds()
        let snapshot: NetlinkSnapshot
        let loop: EventLoop
        let prober: HTTPProber
        do { snapshot = try NetlinkSnapshot() } catch { throw .netlink(error) }
        do { loop = try EventLoop() } catch { throw .system(error) }
        do { prober = try HTTPProber(loop: loop) } catch { throw .curl(error) }
        let rounds = RoundRunner(loop: loop, prober: prober, resolver: DNSResolver(loop: loop))
        let finder = DNSServerFinder(settings: configuration.dns)

        let settings = ProbeSettings(configuration: configuration)
        var reports: [CheckReport?] = Array(repeating: nil, count: interfaces.count)
        for (position, name) in interfaces.enumerated() {
            let facts = snapshot.facts(for: name)
            let link = LinkEvaluator.evaluate(facts)
            let kind = kindReader.kind(of: name, configured: configuration.interfaceKinds[name.value])
            let requests = CheckPlanner.requests(for: name, link: link, probes: configuration.probes)
            var servers: DNSServers?
            if case .probe = link { servers = finder.servers(for: name, index: facts?.index ?? 0) }
            rounds.run(requests, dns: RoundDNS(servers: servers ?? .none, settings: configuration.dns), settings: settings,
                       validatorTimeoutMilliseconds: configuration.validatorTimeoutMilliseconds) { round in
                reports[position] = CheckPlanner.report(
                    interface: name, kind: kind, link: link, results: round.probes,
                    thresholdPercent: self.configuration.successThresholdPercent,
                    elapsedMilliseconds: MonotonicClock.nowMilliseconds() - start,
                    dns: servers, knownAnswers: round.knownAnswers)
            }
        }
        do { try loop.run() } catch { throw .system(error) }
        // The loop returns only when nothing is in flight, so every report is there.
        return reports.compactMap { $0 }
    }
}
