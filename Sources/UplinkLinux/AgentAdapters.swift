import UplinkCore

/// The adapters one agent drives, each behind its seam (see AdapterProtocols.swift):
/// the real ones from `linux(loop:)`, fakes in tests.
public struct AgentAdapters {
    public var prober: ProbeSending
    public var resolver: NameResolving
    public var hooks: HookSink
    public var kinds: KindReading
    public var leases: LeaseReading
    public var traffic: TrafficCounting
    /// Makes the link source when the agent starts: the loop, the netlink receive
    /// buffer size, and where each batch of changes goes.
    public var links: (EventLoop, Int, @escaping LinkHandler) throws(AdapterError) -> LinkSource

    public init(prober: ProbeSending, resolver: NameResolving, hooks: HookSink, kinds: KindReading,
                leases: LeaseReading, traffic: TrafficCounting,
                links: @escaping (EventLoop, Int, @escaping LinkHandler) throws(AdapterError) -> LinkSource) {
        self.prober = prober
        self.resolver = resolver
        self.hooks = hooks
        self.kinds = kinds
        self.leases = leases
        self.traffic = traffic
        self.links = links
    }

    /// libcurl, c-ares, the hooks directory, sysfs, lease files and rtnetlink.
    public static func linux(loop: EventLoop, configuration: Configuration) throws(AdapterError) -> AgentAdapters {
        let prober: HTTPProber
        do { prober = try HTTPProber(loop: loop) } catch { throw .curl(error) }
        return AgentAdapters(
            prober: prober, resolver: DNSResolver(loop: loop),
            hooks: HookRunner(loop: loop, directories: HookDirectories(configuration.agent),
                              timeoutMilliseconds: configuration.agent.hookTimeoutMilliseconds),
            kinds: SysfsKindReader(), leases: MeteredLeaseReader(), traffic: SysfsTrafficCounters(),
            links: { loop, receiveBufferBytes, handler throws(AdapterError) in
                do throws(NetlinkError) {
                    return try LinkTracker(loop: loop, receiveBufferBytes: receiveBufferBytes, handler: handler)
                } catch {
                    throw .netlink(error)
                }
            })
    }
}
