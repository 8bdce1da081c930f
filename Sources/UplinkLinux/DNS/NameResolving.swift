import UplinkCore

/// Resolves a name through given servers, bound to an interface (nil: unbound).
/// `completion` runs exactly once, on the loop, within about `timeoutMilliseconds`.
package protocol NameResolving: AnyObject {
    func resolve(_ name: String, family: AddressFamily, interface: InterfaceName?, servers: [IPAddress],
                 timeoutMilliseconds: Int, completion: @escaping (DNSLookup) -> Void)
}

extension NameResolving {
    /// Resolves `name` through an uplink's servers as its probes do: bound to the
    /// uplink, unless the servers are only a loopback cache (a bound socket cannot
    /// reach those).
    package func resolve(_ name: String, family: AddressFamily, on interface: InterfaceName, through servers: DNSServers,
                        timeoutMilliseconds: Int, completion: @escaping (DNSLookup) -> Void) {
        resolve(name, family: family, interface: servers.bindsToInterface ? interface : nil,
                servers: servers.ordered(for: family), timeoutMilliseconds: timeoutMilliseconds, completion: completion)
    }
}
