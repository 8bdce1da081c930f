import CNetlink
import Glibc
import UplinkCore

/// Every routing rule of both families, read with a raw RTM_GETRULE dump: libnl 3.7's
/// rule objects leave out FRA_SUPPRESS_PREFIXLEN, and uplinkd's first rule is nothing
/// without it (`lookup main` alone would take every packet).
enum RuleDump {
    static func rules(_ socket: NetlinkSocket) throws(NetlinkError) -> [RoutingRule] {
        var header = fib_rule_hdr()
        header.family = UInt8(AF_UNSPEC)
        var rules: [RoutingRule] = []
        try NetlinkDump.run(socket, type: Int32(RTM_GETRULE), header: header, what: "the routing rules") { message in
            if let rule = parse(message) { rules.append(rule) }
        }
        return rules
    }

    private static func parse(_ message: UnsafeMutablePointer<nlmsghdr>) -> RoutingRule? {
        // FRA_MAX is __FRA_MAX - 1, a macro Swift cannot import.
        guard let (rule, attributes) = NetlinkDump.attributes(of: message, after: fib_rule_hdr.self,
                                                              highest: Int32(__FRA_MAX) - 1) else { return nil }
        let family: AddressFamily
        switch Int32(rule.family) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return nil
        }
        func u32(_ kind: Int) -> UInt32? { attributes[kind].map { nla_get_u32($0) } }
        func u8(_ kind: Int) -> UInt8? { attributes[kind].map { nla_get_u8($0) } }
        return RoutingRule(
            family: family, priority: Int(u32(FRA_PRIORITY) ?? 0),
            table: Int(u32(FRA_TABLE) ?? UInt32(rule.table)),
            protocolNumber: Int(u8(FRA_PROTOCOL) ?? 0),
            suppressPrefixLength: u32(FRA_SUPPRESS_PREFIXLEN).flatMap { $0 == UInt32.max ? nil : Int($0) },
            fwmark: u32(FRA_FWMARK), fwmask: u32(FRA_FWMASK))
    }
}
