import UplinkCore

// The one set of LinkFacts builders for every Swift test target.

/// An address with its prefix length (an invalid literal stops the test run).
package func address(_ text: String, _ prefix: Int, scope: String = "global") -> InterfaceAddress {
    guard let ip = IPAddress(text) else { preconditionFailure("not an IP address: \(text)") }
    return InterfaceAddress(address: ip, prefixLength: prefix, scope: scope)
}

/// A default route in the main table.
package func defaultRoute(_ family: AddressFamily, via gateway: String? = nil, metric: Int = 100,
                         table: Int = 254) -> DefaultRoute {
    DefaultRoute(family: family, gateway: gateway.flatMap(IPAddress.init), metric: metric, table: table)
}

/// An interface as the kernel would report it; by default wlan0 (index 3), up, with
/// carrier, and nothing else.
package func link(_ name: InterfaceName = "wlan0", index: Int = 3, adminUp: Bool = true, carrier: Bool = true,
                 addresses: [InterfaceAddress] = [], routes: [DefaultRoute] = [],
                 loopback: Bool = false, type: String? = nil) -> LinkFacts {
    LinkFacts(name: name, index: index, adminUp: adminUp, carrier: carrier,
              addresses: addresses, defaultRoutes: routes, operState: carrier ? "up" : "down",
              isLoopback: loopback, linkType: type)
}

/// An uplink that can be probed over IPv4: 10.0.INDEX.2/24 with a default route via
/// 10.0.INDEX.1 (carrier can be taken away).
package func usableLink(_ name: InterfaceName, index: Int, carrier: Bool = true) -> LinkFacts {
    link(name, index: index, carrier: carrier, addresses: [address("10.0.\(index).2", 24)],
         routes: [defaultRoute(.ipv4, via: "10.0.\(index).1")])
}

/// A moment `milliseconds` into a test (wall clock near 2027).
package func at(_ milliseconds: Int) -> Instant {
    Instant(monotonicMilliseconds: milliseconds, wallSeconds: 1_800_000_000 + milliseconds / 1_000)
}
