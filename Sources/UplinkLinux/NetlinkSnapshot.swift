import CNetlink
import Glibc
import UplinkCore

/// A one-shot dump of links, addresses and routes over rtnetlink (libnl-route), for
/// `check` and `links`. The caches are owned here and freed with the object.
public final class NetlinkSnapshot {
    /// Every interface, keyed by index.
    public let links: [Int: LinkFacts]

    public init() throws(NetlinkError) {
        let socket = try NetlinkSocket()
        var linkCache: OpaquePointer?, addressCache: OpaquePointer?, routeCache: OpaquePointer?
        defer {
            if let linkCache { nl_cache_free(linkCache) }
            if let addressCache { nl_cache_free(addressCache) }
            if let routeCache { nl_cache_free(routeCache) }
        }
        var result = rtnl_link_alloc_cache(socket.pointer, AF_UNSPEC, &linkCache)
        guard result >= 0, let linkCache else { throw NetlinkError("dumping links", code: result) }
        result = rtnl_addr_alloc_cache(socket.pointer, &addressCache)
        guard result >= 0, let addressCache else { throw NetlinkError("dumping addresses", code: result) }
        result = rtnl_route_alloc_cache(socket.pointer, AF_UNSPEC, 0, &routeCache)
        guard result >= 0, let routeCache else { throw NetlinkError("dumping routes", code: result) }
        result = RouteCacheView.reload(routes: routeCache, socket: socket.pointer)
        guard result >= 0 else { throw NetlinkError("dumping routes", code: result) }
        links = RouteCacheView(links: linkCache, addresses: addressCache, routes: routeCache)
            .allFacts(defaultRoutes: try DefaultRouteDump.routes(socket))
    }

    /// Facts for one interface, or nil when the kernel has no interface of that name.
    public func facts(for name: InterfaceName) -> LinkFacts? {
        links.values.first { $0.name == name }
    }
}
