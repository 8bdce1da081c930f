/// How probes resolve names (`[dns]` and `[interface NAME] dns`).
public struct DNSSettings: Sendable, Equatable {
    /// Sources that may be used; discovery still follows `DNSSource.allCases` order.
    public var sources: Set<DNSSource> = Set(DNSSource.allCases)
    public var dhclientLeaseDirectories = ["/var/lib/dhcp", "/var/lib/dhclient"]
    public var resolvconfDirectory = "/run/resolvconf/interface"
    public var resolvConfPath = "/etc/resolv.conf"
    /// Not configuration keys: fixed by those programs, settable for tests.
    public var networkdDirectory = "/run/systemd/netif/links"
    public var resolvedDirectory = "/run/systemd/resolve/netif"
    public var networkManagerDirectories = ["/run/NetworkManager", "/var/lib/NetworkManager"]
    /// Time limit for resolving one name (all servers and retries).
    public var timeoutMilliseconds = 3_000
    public var knownAnswer: KnownAnswer?
    /// Whether a public probe name answered with a private address means a portal.
    public var hijackCheck = true
    /// How long a name resolved for a validated probe is reused by light rounds: its
    /// TTL, but at least the lower bound (answers with TTL 0 are common) and at most
    /// the upper (a moved endpoint is found within the hour). Nil: never reused.
    public var answerReuseMilliseconds: ClosedRange<Int>? = 30_000...3_600_000

    public init() {}
}
