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

    public enum Failure: Error, CustomStringConvertible {
        case netlink(NetlinkError)
        case system(SystemError)
        case curl(CurlError)

        public var description: String {
            switch self {
            case .netlink(let error): return "\(error)"
            case .system(let error): return "\(error)"
            case .curl(let error): return "\(error)"
            }
        }
    }

    public func run(_ interfaces: [InterfaceName]) throws(Failure) -> [CheckReport] {
        let start = MonotonicClock.nowMilliseconds()
        let snapshot: NetlinkSnapshot
        let loop: EventLoop
        let prober: HTTPProber
        do {
            snapshot = try NetlinkSnapshot()
        } catch {
            throw .netlink(error)
        }
        do {
            loop = try EventLoop()
        } catch {
            throw .system(error)
        }
        do {
            prober = try HTTPProber(loop: loop)
        } catch {
            throw .curl(error)
        }

        let settings = ProbeSettings(configuration: configuration)
        let probes = configuration.probes
        var plans: [(name: InterfaceName, link: LinkEvaluator.Result)] = []
        // Results are kept in request order, not completion order: the first portal in
        // probe order names the portal URL, and the output must not depend on timing.
        var slots: [ProbeResult?] = []
        var finishedAt: [String: Int] = [:]
        for name in interfaces {
            let link = LinkEvaluator.evaluate(snapshot.facts(for: name))
            plans.append((name, link))
            finishedAt[name.value] = MonotonicClock.nowMilliseconds()
            for request in CheckPlanner.requests(for: name, link: link, probes: probes) {
                let slot = slots.count
                slots.append(nil)
                do {
                    try prober.start(request, settings: settings) { result in
                        slots[slot] = result
                        finishedAt[result.request.interface.value] = MonotonicClock.nowMilliseconds()
                    }
                } catch {
                    throw .curl(error)
                }
            }
        }
        do {
            try loop.run()
        } catch {
            throw .system(error)
        }

        // The loop only returns once nothing is in flight, so every slot is filled.
        var results = slots.compactMap { $0 }
        let validator = ValidatorRunner(timeoutMilliseconds: configuration.validatorTimeoutMilliseconds)
        for index in results.indices {
            guard let command = results[index].request.probe.expectation.validator,
                  case .response(var response) = results[index].outcome else { continue }
            let request = results[index].request
            response.validatorAccepted = validator.accepts(command, body: response.body, status: response.status,
                                                           url: request.probe.url.description, interface: request.interface)
            results[index].outcome = .response(response)
            finishedAt[request.interface.value] = MonotonicClock.nowMilliseconds()
        }

        return plans.map { plan in
            let kind = kindReader.kind(of: plan.name, configured: configuration.interfaceKinds[plan.name.value])
            let elapsed = finishedAt[plan.name.value, default: start] - start
            return CheckPlanner.report(interface: plan.name, kind: kind, link: plan.link, results: results,
                                       thresholdPercent: configuration.successThresholdPercent,
                                       elapsedMilliseconds: elapsed)
        }
    }
}
