import UplinkCore

/// The adapters one agent drives, each behind its seam (see AdapterProtocols.swift):
/// the real ones from `linux(loop:)`, fakes in tests.
package struct AgentAdapters {
    package var prober: ProbeSending
    package var resolver: NameResolving
    package var hooks: HookSink
    package var kinds: KindReading
    package var files: NetworkFileReading
    package var validator: AnswerValidating
    package var traffic: TrafficCounting
    /// Makes the modem source when the agent starts with `modemmanager = yes`.
    package var modems: (EventLoop) -> ModemSource? = { _ in nil }
    /// Makes the link counter source for data plans (nil: no plan is counted).
    package var counters: (EventLoop) -> LinkCounting? = { _ in nil }
    /// Opens the data plans' file at a path (nil: plans are not kept across restarts).
    package var planStore: (String) -> PlanStore? = { _ in nil }
    /// Makes the link source when the agent starts: the loop, the netlink receive
    /// buffer size, and where each batch of changes goes.
    package var links: (EventLoop, Int, @escaping LinkHandler) throws(AdapterError) -> LinkSource

    package init(prober: ProbeSending, resolver: NameResolving, hooks: HookSink, kinds: KindReading,
                files: NetworkFileReading, validator: AnswerValidating, traffic: TrafficCounting,
                links: @escaping (EventLoop, Int, @escaping LinkHandler) throws(AdapterError) -> LinkSource) {
        self.prober = prober
        self.resolver = resolver
        self.hooks = hooks
        self.kinds = kinds
        self.files = files
        self.validator = validator
        self.traffic = traffic
        self.links = links
    }

    /// libcurl, c-ares, the hooks directory, sysfs, the host's network files, validator
    /// processes and rtnetlink.
    package static func linux(loop: EventLoop, configuration: Configuration) throws(AdapterError) -> AgentAdapters {
        let prober: HTTPProber
        do { prober = try HTTPProber(loop: loop) } catch { throw .curl(error) }
        var adapters = AgentAdapters(
            prober: prober, resolver: DNSResolver(loop: loop),
            hooks: HookRunner(loop: loop, directories: HookDirectories(configuration.agent),
                              timeoutMilliseconds: configuration.agent.hookTimeoutMilliseconds),
            kinds: SysfsKindReader(), files: HostNetworkFiles(), validator: ValidatorRunner(loop: loop),
            traffic: SysfsTrafficCounters(),
            links: { loop, receiveBufferBytes, handler throws(AdapterError) in
                do throws(NetlinkError) {
                    return try LinkTracker(loop: loop, receiveBufferBytes: receiveBufferBytes, handler: handler)
                } catch {
                    throw .netlink(error)
                }
            })
        adapters.modems = { loop in ModemManagerClient(loop: loop) }
        adapters.planStore = { path in PlanStore(path: path) }
        adapters.counters = { loop in
            do {
                return try NetlinkLinkCounters(loop: loop)
            } catch {
                Log.error("cannot read link counters: \(error); data plans are not counted")
                return nil
            }
        }
        return adapters
    }
}
