import CNetlink
import Glibc
import UplinkCore

/// Every routing rule of both families, read with a raw RTM_GETRULE dump: libnl 3.7's
/// rule objects leave out FRA_SUPPRESS_PREFIXLEN, and uplinkd's first rule is nothing
/// without it (`lookup main` alone would take every packet).
enum RuleDump {
    /// Collects what the callback parsed; lives on the caller's stack for the dump.
    private final class Collector {
        var rules: [RoutingRule] = []
    }

    static func rules(_ socket: NetlinkSocket) throws(NetlinkError) -> [RoutingRule] {
        var header = fib_rule_hdr()
        header.family = UInt8(AF_UNSPEC)
        let sent = nl_send_simple(socket.pointer, Int32(RTM_GETRULE), Int32(NLM_F_DUMP), &header,
                                  MemoryLayout<fib_rule_hdr>.size)
        guard sent >= 0 else { throw NetlinkError("asking for the routing rules", code: sent) }
        let collector = Collector()
        // The callback gets the collector unretained: it runs only inside
        // nl_recvmsgs_default below, while `collector` is alive.
        let user = Unmanaged.passUnretained(collector).toOpaque()
        let modified = nl_socket_modify_cb(socket.pointer, NL_CB_VALID, NL_CB_CUSTOM, RuleDump.parse, user)
        guard modified >= 0 else { throw NetlinkError("reading the routing rules", code: modified) }
        let received = withExtendedLifetime(collector) { nl_recvmsgs_default(socket.pointer) }
        // The socket may read other dumps later: no callback left pointing at a dead collector.
        _ = nl_socket_modify_cb(socket.pointer, NL_CB_VALID, NL_CB_DEFAULT, nil, nil)
        guard received >= 0 else { throw NetlinkError("reading the routing rules", code: received) }
        return collector.rules
    }

    private static let parse: nl_recvmsg_msg_cb_t = { message, user in
        guard let message, let user, let header = nlmsg_hdr(message),
              nlmsg_datalen(header) >= Int32(MemoryLayout<fib_rule_hdr>.size) else { return Int32(NL_SKIP.rawValue) }
        let collector = Unmanaged<Collector>.fromOpaque(user).takeUnretainedValue()
        let rule = nlmsg_data(header).load(as: fib_rule_hdr.self)
        let family: AddressFamily
        switch Int32(rule.family) {
        case AF_INET: family = .ipv4
        case AF_INET6: family = .ipv6
        default: return Int32(NL_SKIP.rawValue)
        }
        // FRA_MAX is __FRA_MAX - 1, a macro Swift cannot import.
        let highest = Int32(__FRA_MAX) - 1
        var attributes = [UnsafeMutablePointer<nlattr>?](repeating: nil, count: Int(highest) + 1)
        guard nlmsg_parse(header, Int32(MemoryLayout<fib_rule_hdr>.size), &attributes, highest, nil) >= 0 else {
            return Int32(NL_SKIP.rawValue)
        }
        func u32(_ kind: Int) -> UInt32? { attributes[Int(kind)].map { nla_get_u32($0) } }
        func u8(_ kind: Int) -> UInt8? { attributes[Int(kind)].map { nla_get_u8($0) } }
        collector.rules.append(RoutingRule(
            family: family, priority: Int(u32(FRA_PRIORITY) ?? 0),
            table: Int(u32(FRA_TABLE) ?? UInt32(rule.table)),
            protocolNumber: Int(u8(FRA_PROTOCOL) ?? 0),
            suppressPrefixLength: u32(FRA_SUPPRESS_PREFIXLEN).flatMap { $0 == UInt32.max ? nil : Int($0) }))
        return Int32(NL_OK.rawValue)
    }
}
