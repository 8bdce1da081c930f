import CNetlink
import Glibc
import UplinkCore

/// Every unicast default route of both families and all tables, per interface index,
/// read with a raw RTM_GETROUTE dump. libnl 3.7's route cache keys IPv4 routes without
/// their interface: two uplinks' default routes of equal metric (networkd gives every
/// DHCP link metric 1024; `ip route append`) would leave one of them routeless.
enum DefaultRouteDump {
    static func routes(_ socket: NetlinkSocket) throws(NetlinkError) -> [Int: [DefaultRoute]] {
        var header = rtmsg()
        header.rtm_family = UInt8(AF_UNSPEC)
        var routes: [Int: [DefaultRoute]] = [:]
        try NetlinkDump.run(socket, type: Int32(RTM_GETROUTE), header: header, what: "the routes") { message in
            for (index, route) in parse(message) { routes[index, default: []].append(route) }
        }
        return routes
    }

    private static func parse(_ message: UnsafeMutablePointer<nlmsghdr>) -> [(Int, DefaultRoute)] {
        guard let (route, attributes) = NetlinkDump.attributes(of: message, after: rtmsg.self,
                                                               highest: Int32(__RTA_MAX.rawValue) - 1),
              route.rtm_dst_len == 0, route.rtm_type == UInt8(RTN_UNICAST) else { return [] }
        let family: AddressFamily
        switch Int32(route.rtm_family) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return []
        }
        func attribute(_ kind: rtattr_type_t) -> UnsafeMutablePointer<nlattr>? { attributes[Int(kind.rawValue)] }
        let table = attribute(RTA_TABLE).map { Int(nla_get_u32($0)) } ?? Int(route.rtm_table)
        let metric = attribute(RTA_PRIORITY).map { Int(nla_get_u32($0)) } ?? 0
        func make(_ gateway: IPAddress?) -> DefaultRoute {
            DefaultRoute(family: family, gateway: gateway, metric: metric, table: table, protocolNumber: Int(route.rtm_protocol))
        }
        if let hops = attribute(RTA_MULTIPATH) {
            return nextHops(hops, family: family).map { ($0.index, make($0.gateway)) }
        }
        guard let oif = attribute(RTA_OIF) else { return [] }
        return [(Int(nla_get_u32(oif)), make(attribute(RTA_GATEWAY).flatMap { address($0, family: family) }))]
    }

    /// The next hops of RTA_MULTIPATH: `struct rtnexthop` records, each followed by
    /// its own attributes (RTA_GATEWAY).
    private static func nextHops(_ attribute: UnsafeMutablePointer<nlattr>, family: AddressFamily) -> [(index: Int, gateway: IPAddress?)] {
        let payload = UnsafeRawBufferPointer(start: nla_data(attribute), count: Int(nla_len(attribute)))
        let headerSize = MemoryLayout<rtnexthop>.size
        var hops: [(Int, IPAddress?)] = []
        var offset = 0
        while offset + headerSize <= payload.count {
            let hop = payload.loadUnaligned(fromByteOffset: offset, as: rtnexthop.self)
            let length = Int(hop.rtnh_len)
            guard length >= headerSize, offset + length <= payload.count else { break }
            var gateway: IPAddress?
            var inner = offset + align(headerSize)
            while inner + 4 <= offset + length {
                let size = Int(payload.loadUnaligned(fromByteOffset: inner, as: UInt16.self))
                let kind = payload.loadUnaligned(fromByteOffset: inner + 2, as: UInt16.self)
                guard size >= 4, inner + size <= offset + length else { break }
                if kind == UInt16(RTA_GATEWAY.rawValue) {
                    gateway = IPAddress(family: family, bytes: Array(payload[(inner + 4)..<(inner + size)]))
                }
                inner += align(size)
            }
            hops.append((Int(hop.rtnh_ifindex), gateway))
            offset += align(length)
        }
        return hops
    }

    private static func address(_ attribute: UnsafeMutablePointer<nlattr>, family: AddressFamily) -> IPAddress? {
        let bytes = UnsafeRawBufferPointer(start: nla_data(attribute), count: Int(nla_len(attribute)))
        return IPAddress(family: family, bytes: Array(bytes))
    }

    /// Netlink attributes and next hops are padded to 4 bytes.
    private static func align(_ length: Int) -> Int { (length + 3) & ~3 }
}
