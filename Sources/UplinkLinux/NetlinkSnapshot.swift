import CNetlink
import Glibc
import UplinkCore

/// A libnl failure: the libnl error code (NLE_*) and its sentence.
public struct NetlinkError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let operation: String

    init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code < 0 ? -code : code
    }

    public var description: String {
        "\(operation): \(String(cString: nl_geterror(code))) (libnl error \(code))"
    }
}

/// A one-shot dump of links, addresses and routes over rtnetlink (libnl-route), turned
/// into `LinkFacts` per interface. The live tracker (cache manager) builds on the same
/// conversions.
public final class NetlinkSnapshot {
    private let socket: OpaquePointer
    private var linkCache: OpaquePointer?
    private var addressCache: OpaquePointer?
    private var routeCache: OpaquePointer?

    public init() throws(NetlinkError) {
        guard let socket = nl_socket_alloc() else { throw NetlinkError("nl_socket_alloc", code: NLE_NOMEM) }
        self.socket = socket
        let connected = nl_connect(socket, NETLINK_ROUTE)
        guard connected >= 0 else {
            nl_socket_free(socket)
            throw NetlinkError("connecting to rtnetlink", code: connected)
        }
        do throws(NetlinkError) {
            var cache: OpaquePointer?
            var result = rtnl_link_alloc_cache(socket, AF_UNSPEC, &cache)
            guard result >= 0 else { throw NetlinkError("dumping links", code: result) }
            linkCache = cache
            result = rtnl_addr_alloc_cache(socket, &cache)
            guard result >= 0 else { throw NetlinkError("dumping addresses", code: result) }
            addressCache = cache
            result = rtnl_route_alloc_cache(socket, AF_UNSPEC, 0, &cache)
            guard result >= 0 else { throw NetlinkError("dumping routes", code: result) }
            routeCache = cache
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    private func release() {
        if let linkCache { nl_cache_free(linkCache) }
        if let addressCache { nl_cache_free(addressCache) }
        if let routeCache { nl_cache_free(routeCache) }
        linkCache = nil
        addressCache = nil
        routeCache = nil
        nl_socket_free(socket)
    }

    /// Facts for one interface, or nil when the kernel has no interface of that name.
    public func facts(for name: InterfaceName) -> LinkFacts? {
        guard let linkCache else { return nil }
        let link: OpaquePointer? = name.value.withCString { rtnl_link_get_by_name(linkCache, $0) }
        guard let link else { return nil }
        defer { rtnl_link_put(link) }
        let index = rtnl_link_get_ifindex(link)
        let flags = rtnl_link_get_flags(link)
        return LinkFacts(
            name: name,
            index: Int(index),
            adminUp: flags & UInt32(IFF_UP.rawValue) != 0,
            carrier: flags & UInt32(IFF_LOWER_UP.rawValue) != 0,
            addresses: addresses(ofIndex: index),
            defaultRoutes: defaultRoutes(viaIndex: index)
        )
    }

    private func addresses(ofIndex index: Int32) -> [InterfaceAddress] {
        var result: [InterfaceAddress] = []
        forEach(addressCache) { object in
            guard rtnl_addr_get_ifindex(object) == index,
                  let local = rtnl_addr_get_local(object),
                  let address = NetlinkSnapshot.ipAddress(local) else { return }
            result.append(InterfaceAddress(address: address, prefixLength: Int(rtnl_addr_get_prefixlen(object))))
        }
        return result
    }

    private func defaultRoutes(viaIndex index: Int32) -> [DefaultRoute] {
        var result: [DefaultRoute] = []
        forEach(routeCache) { route in
            guard rtnl_route_get_type(route) == UInt8(RTN_UNICAST) else { return }
            if let destination = rtnl_route_get_dst(route), nl_addr_get_prefixlen(destination) != 0 { return }
            let family: AddressFamily
            switch Int32(rtnl_route_get_family(route)) {
            case AF_INET: family = .ipv4
            case AF_INET6: family = .ipv6
            default: return
            }
            for hop in 0..<rtnl_route_get_nnexthops(route) {
                guard let nexthop = rtnl_route_nexthop_n(route, hop), rtnl_route_nh_get_ifindex(nexthop) == index else { continue }
                let gateway = rtnl_route_nh_get_gateway(nexthop).flatMap(NetlinkSnapshot.ipAddress)
                result.append(DefaultRoute(family: family, gateway: gateway,
                                           metric: Int(rtnl_route_get_priority(route)),
                                           table: Int(rtnl_route_get_table(route))))
            }
        }
        return result
    }

    private func forEach(_ cache: OpaquePointer?, _ body: (OpaquePointer) -> Void) {
        guard let cache else { return }
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
}
