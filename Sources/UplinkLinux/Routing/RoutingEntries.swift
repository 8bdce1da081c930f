import CNetlink
import Glibc
import UplinkCore

/// uplinkd's own rules and routes in libnl caches: read them, and delete them (at the
/// agent's start and stop, and for `uplinkd routes --remove`). The caches belong to
/// the caller (the live `LinkTracker`, or a one-shot dump here).
package enum RoutingEntries {
    /// The routes of a route cache that `settings` owns, one per next hop.
    static func routes(_ cache: OpaquePointer, ownedBy settings: RoutingSettings) -> [OwnedRoute] {
        var routes: [OwnedRoute] = []
        RouteCacheView.forEach(cache) { route in
            routes += ownedRoutes(route, settings: settings)
        }
        return routes
    }

    /// Deletes the rules and routes `settings` owns; returns what went. A failure
    /// stops at once (what went before it stays gone).
    package static func remove(ownedBy settings: RoutingSettings) throws(NetlinkError) -> [String] {
        var removed: [String] = []
        // libnl's dump can merge two routes that differ only by interface into one
        // object, and deleting it deletes one of them: dump again until none is left.
        for _ in 0..<4 {
            let pass = try removeOnce(ownedBy: settings)
            if pass.isEmpty { break }
            removed += pass
        }
        return removed
    }

    private static func removeOnce(ownedBy settings: RoutingSettings) throws(NetlinkError) -> [String] {
        let dump = try Dump()
        let socket = dump.socket, routeCache = dump.routes
        var removed: [String] = []
        var failure: NetlinkError?
        for rule in try RuleDump.rules(socket).filter(settings.owns) {
            guard let object = rtnl_rule_alloc() else { throw NetlinkError("rtnl_rule_alloc", code: NLE_NOMEM) }
            defer { rtnl_rule_put(object) }
            rtnl_rule_set_family(object, rule.family == .ipv4 ? AF_INET : AF_INET6)
            rtnl_rule_set_prio(object, UInt32(rule.priority))
            rtnl_rule_set_table(object, UInt32(rule.table))
            _ = rtnl_rule_set_protocol(object, UInt8(rule.protocolNumber))
            let deleted = rtnl_rule_delete(socket.pointer, object, 0)
            // Gone already (another remover): fine.
            guard deleted >= 0 || -deleted == NLE_OBJ_NOTFOUND else { throw NetlinkError("deleting \(rule)", code: deleted) }
            removed.append("\(rule)")
        }
        RouteCacheView.forEach(routeCache) { object in
            guard failure == nil else { return }
            let owned = ownedRoutes(object, settings: settings)
            guard !owned.isEmpty else { return }
            let deleted = rtnl_route_delete(socket.pointer, object, 0)
            if deleted < 0 && -deleted != NLE_OBJ_NOTFOUND {
                failure = NetlinkError("deleting \(owned[0])", code: deleted)
            } else {
                removed += owned.map { "\($0)" }
            }
        }
        if let failure { throw failure }
        return removed
    }

    /// The entries `settings` owns, from a one-shot dump.
    package static func read(ownedBy settings: RoutingSettings) throws(NetlinkError) -> (rules: [RoutingRule], routes: [OwnedRoute]) {
        let dump = try Dump()
        return (try RuleDump.rules(dump.socket).filter(settings.owns), routes(dump.routes, ownedBy: settings))
    }

    /// Every route of both families, dumped once; the cache is freed with it.
    private final class Dump {
        let socket: NetlinkSocket
        let routes: OpaquePointer

        init() throws(NetlinkError) {
            socket = try NetlinkSocket()
            var routeCache: OpaquePointer?
            let result = rtnl_route_alloc_cache(socket.pointer, AF_UNSPEC, 0, &routeCache)
            guard result >= 0, let routeCache else { throw NetlinkError("dumping routes", code: result) }
            routes = routeCache
        }

        deinit { nl_cache_free(routes) }
    }

    private static func ownedRoutes(_ route: OpaquePointer, settings: RoutingSettings) -> [OwnedRoute] {
        let table = Int(rtnl_route_get_table(route)), protocolNumber = Int(rtnl_route_get_protocol(route))
        guard table == settings.table || protocolNumber == settings.protocolNumber,
              let family = family(Int32(rtnl_route_get_family(route))) else { return [] }
        var destination = "default"
        if let address = rtnl_route_get_dst(route), nl_addr_get_prefixlen(address) != 0 {
            let prefix = nl_addr_get_prefixlen(address)
            destination = RouteCacheView.ipAddress(address).map { "\($0)/\(prefix)" } ?? "?/\(prefix)"
        }
        let metric = Int(rtnl_route_get_priority(route))
        var owned: [OwnedRoute] = []
        for hop in 0..<rtnl_route_get_nnexthops(route) {
            guard let nexthop = rtnl_route_nexthop_n(route, hop) else { continue }
            owned.append(OwnedRoute(family: family, destination: destination,
                                    gateway: rtnl_route_nh_get_gateway(nexthop).flatMap(RouteCacheView.ipAddress),
                                    interfaceIndex: Int(rtnl_route_nh_get_ifindex(nexthop)),
                                    interfaceName: interfaceName(Int(rtnl_route_nh_get_ifindex(nexthop))),
                                    table: table, metric: metric, protocolNumber: protocolNumber))
        }
        if owned.isEmpty {  // blackhole, unreachable: no next hop
            owned.append(OwnedRoute(family: family, destination: destination, gateway: nil, interfaceIndex: 0,
                                    table: table, metric: metric, protocolNumber: protocolNumber))
        }
        return owned
    }

    /// The name of interface `index`, nil when there is none by now.
    static func interfaceName(_ index: Int) -> String? {
        guard index > 0 else { return nil }
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(index), &name) != nil else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func family(_ value: Int32) -> AddressFamily? {
        switch value {
        case AF_INET: return .ipv4
        case AF_INET6: return .ipv6
        default: return nil
        }
    }
}
