import CNetlink
import Glibc
import UplinkCore

/// A one-shot dump of links, addresses and default routes over rtnetlink, for `check`
/// and `links`: three dumps, links and addresses into libnl caches (owned here and
/// freed with the object), default routes raw (`DefaultRouteDump`: libnl's route
/// cache would lose some, and nothing else of it is read).
package final class NetlinkSnapshot {
    /// Every interface, keyed by index.
    package let links: [Int: LinkFacts]

    package init() throws(NetlinkError) {
        let socket = try NetlinkSocket()
        var linkCache: OpaquePointer?, addressCache: OpaquePointer?
        defer {
            if let linkCache { nl_cache_free(linkCache) }
            if let addressCache { nl_cache_free(addressCache) }
        }
        var result = rtnl_link_alloc_cache(socket.pointer, AF_UNSPEC, &linkCache)
        guard result >= 0, let linkCache else { throw NetlinkError("dumping links", code: result) }
        result = rtnl_addr_alloc_cache(socket.pointer, &addressCache)
        guard result >= 0, let addressCache else { throw NetlinkError("dumping addresses", code: result) }
        var defaultRoutes: [Int32: [DefaultRoute]] = [:]
        for (index, routes) in try DefaultRouteDump.routes(socket) { defaultRoutes[Int32(clamping: index)] = routes }
        links = RouteCacheView.facts(links: linkCache, addresses: addressCache, defaultRoutes: defaultRoutes)
    }

    /// Facts for one interface, or nil when the kernel has no interface of that name.
    package func facts(for name: InterfaceName) -> LinkFacts? {
        links.values.first { $0.name == name }
    }
}
