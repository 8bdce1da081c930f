/// How probes resolve names (`[dns]` and `[interface NAME] dns`).
package struct DNSSettings: Sendable, Equatable {
    /// Sources that may be used; discovery still follows `DNSSource.allCases` order.
    package var sources: Set<DNSSource> = Set(DNSSource.allCases)
    package var dhclientLeaseDirectories = ["/var/lib/dhcp", "/var/lib/dhclient"]
    package var resolvconfDirectory = "/run/resolvconf/interface"
    package var resolvConfPath = "/etc/resolv.conf"
    /// Not configuration keys: fixed by those programs, settable for tests.
    package var networkdDirectory = "/run/systemd/netif/links"
    package var resolvedDirectory = "/run/systemd/resolve/netif"
    package var networkManagerDirectories = ["/run/NetworkManager", "/var/lib/NetworkManager"]
    /// Time limit for resolving one name (all servers and retries).
    package var timeoutMilliseconds = 3_000
    package var knownAnswer: KnownAnswer?
    /// Whether a public probe name answered with a private address means a portal.
    package var hijackCheck = true
    /// How long a name resolved for a validated probe is reused by light rounds: its
    /// TTL, but at least the lower bound (answers with TTL 0 are common) and at most
    /// the upper (a moved endpoint is found within the hour). Nil: never reused.
    package var answerReuseMilliseconds: ClosedRange<Int>? = 30_000...3_600_000

    package init() {}
}
