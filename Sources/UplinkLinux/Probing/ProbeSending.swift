import UplinkCore

// The seams between the agent and the system: each adapter the agent drives is behind
// one small protocol, so Swift tests can run the agent's own code (reload, the kind
// cache, re-probing after a portal hook, draining on stop) with fakes and a manual
// clock, without root. The Linux adapters are the only production conformances.

/// Sends one HTTP probe. `completion` runs exactly once, on the loop, whatever happens
/// (a probe that cannot even start reports a failure).
public protocol ProbeSending: AnyObject {
    func send(_ request: ProbeRequest, settings: ProbeSettings, completion: @escaping (ProbeResult) -> Void)
}

/// Resolves a name through given servers, bound to an interface (nil: unbound).
/// `completion` runs exactly once, on the loop, within about `timeoutMilliseconds`.
public protocol NameResolving: AnyObject {
    func resolve(_ name: String, family: AddressFamily, interface: InterfaceName?, servers: [IPAddress],
                 timeoutMilliseconds: Int, completion: @escaping (DNSLookup) -> Void)
}

extension NameResolving {
    /// Resolves `name` through an uplink's servers as its probes do: bound to the
    /// uplink, unless the servers are only a loopback cache (a bound socket cannot
    /// reach those).
    public func resolve(_ name: String, family: AddressFamily, on interface: InterfaceName, through servers: DNSServers,
                        timeoutMilliseconds: Int, completion: @escaping (DNSLookup) -> Void) {
        resolve(name, family: family, interface: servers.bindsToInterface ? interface : nil,
                servers: servers.ordered(for: family), timeoutMilliseconds: timeoutMilliseconds, completion: completion)
    }
}

/// Where hook events go: the hook runner, or a recorder in tests.
public protocol HookSink: AnyObject {
    /// Called on the loop when every hook of an event has run.
    var onEventFinished: ((HookEvent) -> Void)? { get set }
    func enqueue(_ event: HookEvent)
    /// Events queued or running: how far the hooks are behind.
    var pendingEvents: Int { get }
    /// Drops queued events, lets a running hook finish, runs the hooks for
    /// `finalEvent` (the stop event), then calls `completion`.
    func drain(finalEvent: HookEvent?, then completion: @escaping () -> Void)
    func reconfigure(directories: HookDirectories, timeoutMilliseconds: Int)
}

/// Tells an interface's kind (sysfs, or a fake tree in tests).
public protocol KindReading {
    func kind(of name: InterfaceName, configured: InterfaceKind?) -> InterfaceKind
}

/// What the host's network files say about one uplink (DHCP lease files, resolvconf,
/// networkd and resolved state): its DNS servers, its network's captive-portal API, and
/// whether its lease says it is metered. `settings` names the files and sources.
public protocol NetworkFileReading {
    /// `configured` (its `[interface NAME] dns`) first, then the enabled sources.
    func dnsServers(for name: InterfaceName, index: Int, configured: [IPAddress]?, settings: DNSSettings) -> DNSServers
    /// The captive-portal API URI its network announced (RFC 8910), if any.
    func captivePortalAPI(for name: InterfaceName, index: Int, settings: DNSSettings) -> ProbeURL?
    func leaseSaysMetered(_ name: InterfaceName, index: Int, settings: DNSSettings) -> Bool
}

/// Runs a probe's external validator on its HTTP answer. `completion` runs exactly
/// once, on the loop, with `validatorAccepted` set when there was one to run.
public protocol AnswerValidating: AnyObject {
    func validate(_ result: ProbeResult, timeoutMilliseconds: Int, completion: @escaping (ProbeResult) -> Void)
}

/// The kernel's interfaces, followed live. A source calls the handler it was made
/// with after each batch of changes.
public protocol LinkSource: AnyObject {
    var links: [Int: LinkFacts] { get }
    /// uplinkd's own rules and routes (those `settings` owns), from the same live view.
    func routingEntries(_ settings: RoutingSettings) -> (rules: [RoutingRule], routes: [OwnedRoute])
    /// `handler` runs on the loop after each batch that changed rules or routes.
    func watchRouting(_ handler: @escaping () -> Void)
    /// Takes in the notifications already queued, so the view is current (after a hook
    /// changed routes, before the agent looks at them).
    func catchUp()
    /// Deletes uplinkd's own rules and routes; returns what went.
    func removeRouting(_ settings: RoutingSettings) throws(NetlinkError) -> [String]
}

/// A source that knows nothing of rules (a test's fake links): no entries, nothing to do.
extension LinkSource {
    public func routingEntries(_ settings: RoutingSettings) -> (rules: [RoutingRule], routes: [OwnedRoute]) { ([], []) }
    public func watchRouting(_ handler: @escaping () -> Void) {}
    public func catchUp() {}
    public func removeRouting(_ settings: RoutingSettings) throws(NetlinkError) -> [String] { [] }
}

/// Receives each batch of link events, `resynced` true after an overflow re-dump, and
/// the state after the batch.
public typealias LinkHandler = (_ events: [LinkEvent], _ resynced: Bool, _ links: [Int: LinkFacts]) -> Void

/// ModemManager's modems, followed live: ModemManager over D-Bus, or a fake in tests.
/// Everything runs on the loop.
public protocol ModemSource: AnyObject {
    /// Called with every modem after each change; empty while ModemManager is not on
    /// the bus.
    var onChange: (([ModemFacts]) -> Void)? { get set }
    /// Connects to the bus and follows ModemManager from now on (attaching again when
    /// it starts or restarts later); modems refresh their signal figures at `signalIntervalMilliseconds`.
    func start(signalIntervalMilliseconds: Int)
    /// Disconnects the modem's data bearer, then connects it again with the bearer's
    /// own properties (the APN included).
    func reconnect(_ equipmentID: String)
    /// Resets the modem; when it is back (a new object), connects it again as it was.
    func reset(_ equipmentID: String)
    /// Disconnects the modem's data bearer, or connects it again with the properties it
    /// had (a cold backup's `standby-bearer = disconnected`).
    func setBearer(_ equipmentID: String, connected: Bool)
}
