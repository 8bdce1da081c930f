import Glibc
import UplinkCore

/// Resolves one name through an uplink the way its probes do, for `uplinkd resolve`
/// (the portal-login hook hands the answer to `curl --resolve`): the servers
/// `DNSServerFinder` finds for the uplink (the configured sources, `[interface NAME]
/// dns` first), asked with `DNSResolver`, every query bound to the uplink. Never the
/// system resolver: the primary's DNS knows nothing of a backup's portal.
package struct UplinkNameLookup {
    package let configuration: Configuration

    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The kernel's index of `interface`, 0 when there is no such interface.
    package static func index(of interface: InterfaceName) -> Int {
        Int(if_nametoindex(interface.value))
    }

    /// The servers a probe round on `interface` would ask now (looked up again on
    /// every call, as a round does: a DHCP renewal may have changed them).
    package func servers(for interface: InterfaceName, index: Int) -> DNSServers {
        DNSServerFinder(settings: configuration.dns)
            .servers(for: interface, index: index, configured: configuration.interfaces[interface]?.dnsServers)
    }

    /// Each of `families`' answers for `name` through `servers`, asked in parallel
    /// within the configured `[dns] timeout`, as a probe round asks them.
    package func resolve(_ name: String, families: [AddressFamily], interface: InterfaceName,
                        servers: DNSServers) throws(AdapterError) -> [AddressFamily: Result<DNSAnswer, DNSFailure>] {
        let loop: EventLoop
        do { loop = try EventLoop() } catch { throw .system(error) }
        let resolver = DNSResolver(loop: loop)
        var answers: [AddressFamily: Result<DNSAnswer, DNSFailure>] = [:]
        for family in families {
            resolver.resolve(name, family: family, on: interface, through: servers,
                             timeoutMilliseconds: configuration.dns.timeoutMilliseconds) { lookup in
                answers[family] = lookup.result
            }
        }
        // The loop returns once nothing is in flight: every family has its answer.
        do { try loop.run() } catch { throw .system(error) }
        return answers
    }
}
