import CNetlink
import Glibc
import UplinkCore

/// Reads libnl's link, address and route caches into `LinkFacts` keyed by interface
/// index. It does not own the caches: a one-shot `NetlinkSnapshot` or the live
/// `LinkTracker` does.
struct RouteCacheView {
    let links: OpaquePointer
    let addresses: OpaquePointer
    let routes: OpaquePointer

    /// Re-reads a route cache so that routes differing only by interface all stay.
    ///
    /// libnl keys routes by family, table, destination and metric, not interface: two
    /// IPv6 default routes of equal metric on two uplinks (router advertisements, metric
    /// 1024 on both) collide, and a plain refill keeps one. Read into an empty cache
    /// through the include path instead, libnl merges the second into the first as
    /// another next hop, which `allFacts` reads per interface.
    static func reload(routes cache: OpaquePointer, socket: OpaquePointer) -> Int32 {
        nl_cache_clear(cache)
        return nl_cache_resync(socket, cache, nil, nil)
    }

    /// Every interface's facts. `defaultRoutes` (a `DefaultRouteDump`, by interface
    /// index) replaces the route cache's default routes, which lose IPv4 routes that
    /// differ only by interface; nil: the cache's (a failed dump).
    func allFacts(defaultRoutes: [Int: [DefaultRoute]]? = nil) -> [Int: LinkFacts] {
        var routesByIndex: [Int32: [DefaultRoute]] = [:]
        if let defaultRoutes {
            for (index, routes) in defaultRoutes { routesByIndex[Int32(clamping: index)] = routes }
        } else {
            routesByIndex = cachedDefaultRoutes()
        }
        return RouteCacheView.facts(links: links, addresses: addresses, defaultRoutes: routesByIndex)
    }

    /// Every interface's facts from a link and an address cache, with the default
    /// routes read elsewhere (by interface index).
    static func facts(links: OpaquePointer, addresses: OpaquePointer,
                      defaultRoutes routesByIndex: [Int32: [DefaultRoute]]) -> [Int: LinkFacts] {
        var addressesByIndex: [Int32: [InterfaceAddress]] = [:]
        RouteCacheView.forEach(addresses) { object in
            guard let local = rtnl_addr_get_local(object), let address = RouteCacheView.ipAddress(local) else { return }
            addressesByIndex[rtnl_addr_get_ifindex(object), default: []].append(
                InterfaceAddress(address: address, prefixLength: Int(rtnl_addr_get_prefixlen(object)),
                                 scope: RouteCacheView.scopeName(rtnl_addr_get_scope(object))))
        }
        var result: [Int: LinkFacts] = [:]
        RouteCacheView.forEach(links) { link in
            guard let rawName = rtnl_link_get_name(link) else { return }
            let text = String(cString: rawName)
            guard let name = InterfaceName(text) else {
                Log.info("ignoring interface with an unusual name '\(text.printableEscaped)'")
                return
            }
            let index = rtnl_link_get_ifindex(link)
            let flags = rtnl_link_get_flags(link)
            result[Int(index)] = LinkFacts(
                name: name,
                index: Int(index),
                adminUp: flags & UInt32(IFF_UP.rawValue) != 0,
                carrier: flags & UInt32(IFF_LOWER_UP.rawValue) != 0,
                addresses: addressesByIndex[index] ?? [],
                defaultRoutes: routesByIndex[index] ?? [],
                operState: RouteCacheView.operStateName(rtnl_link_get_operstate(link)),
                isLoopback: flags & UInt32(IFF_LOOPBACK.rawValue) != 0,
                linkType: rtnl_link_get_type(link).map { String(cString: $0) },
                // libnl reports 0 for "no master".
                masterIndex: rtnl_link_get_master(link) > 0 ? Int(rtnl_link_get_master(link)) : nil
            )
        }
        return result
    }

    /// The route cache's default routes by interface index (see `allFacts`).
    private func cachedDefaultRoutes() -> [Int32: [DefaultRoute]] {
        var routesByIndex: [Int32: [DefaultRoute]] = [:]
        RouteCacheView.forEach(routes) { route in
            guard rtnl_route_get_type(route) == UInt8(RTN_UNICAST) else { return }
            if let destination = rtnl_route_get_dst(route), nl_addr_get_prefixlen(destination) != 0 { return }
            let family: AddressFamily
            switch Int32(rtnl_route_get_family(route)) {
            case AF_INET: family = .ipv4
            case AF_INET6: family = .ipv6
            default: return
            }
            for hop in 0..<rtnl_route_get_nnexthops(route) {
                guard let nexthop = rtnl_route_nexthop_n(route, hop) else { continue }
                let gateway = rtnl_route_nh_get_gateway(nexthop).flatMap(RouteCacheView.ipAddress)
                routesByIndex[rtnl_route_nh_get_ifindex(nexthop), default: []].append(
                    DefaultRoute(family: family, gateway: gateway, metric: Int(rtnl_route_get_priority(route)),
                                 table: Int(rtnl_route_get_table(route)),
                                 protocolNumber: Int(rtnl_route_get_protocol(route))))
            }
        }
        return routesByIndex
    }

    static func forEach(_ cache: OpaquePointer, _ body: (OpaquePointer) -> Void) {
        var object = nl_cache_get_first(cache)
        while let current = object {
            body(current)
            object = nl_cache_get_next(current)
        }
    }

    static func ipAddress(_ address: OpaquePointer) -> IPAddress? {
        let length = Int(nl_addr_get_len(address))
        guard let raw = nl_addr_get_binary_addr(address) else { return nil }
        let bytes = Array(UnsafeRawBufferPointer(start: raw, count: length))
        switch nl_addr_get_family(address) {
        case AF_INET: return IPAddress(family: .ipv4, bytes: bytes)
        case AF_INET6: return IPAddress(family: .ipv6, bytes: bytes)
        default: return nil
        }
    }

    /// Names as `ip address` prints them.
    static func scopeName(_ scope: Int32) -> String {
        switch scope {
        case 0: return "global"
        case 200: return "site"
        case 253: return "link"
        case 254: return "host"
        default: return String(scope)
        }
    }

    /// RFC 2863 operational states (IF_OPER_*), as `ip link` prints them, lower case.
    static func operStateName(_ state: UInt8) -> String {
        switch state {
        case 1: return "notpresent"
        case 2: return "down"
        case 3: return "lowerlayerdown"
        case 4: return "testing"
        case 5: return "dormant"
        case 6: return "up"
        default: return "unknown"
        }
    }
}
