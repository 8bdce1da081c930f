import CNetlink
import Glibc

/// One rtnetlink dump (RTM_GETRULE, RTM_GETROUTE) read with libnl's plain message API,
/// for what libnl 3.7's objects leave out: a rule's suppress_prefixlength, and IPv4
/// routes that differ only by interface (its route cache keeps one of them).
enum NetlinkDump {
    /// Holds the per-message handler while the dump is read.
    private final class Receiver {
        let each: (UnsafeMutablePointer<nlmsghdr>) -> Void
        init(_ each: @escaping (UnsafeMutablePointer<nlmsghdr>) -> Void) { self.each = each }
    }

    /// Sends a dump request of `type` with `header` as its payload and hands every
    /// answer to `each`, on this thread, before returning.
    static func run<Header>(_ socket: NetlinkSocket, type: Int32, header: Header, what: String,
                            each: @escaping (UnsafeMutablePointer<nlmsghdr>) -> Void) throws(NetlinkError) {
        var request = header
        let sent = nl_send_simple(socket.pointer, type, Int32(NLM_F_DUMP), &request, MemoryLayout<Header>.size)
        guard sent >= 0 else { throw NetlinkError("asking for \(what)", code: sent) }
        let receiver = Receiver(each)
        // The callback gets the receiver unretained: it runs only inside
        // nl_recvmsgs_default below, while `receiver` is alive.
        let user = Unmanaged.passUnretained(receiver).toOpaque()
        let modified = nl_socket_modify_cb(socket.pointer, NL_CB_VALID, NL_CB_CUSTOM, NetlinkDump.trampoline, user)
        guard modified >= 0 else { throw NetlinkError("reading \(what)", code: modified) }
        let received = withExtendedLifetime(receiver) { nl_recvmsgs_default(socket.pointer) }
        // The socket reads other dumps later: no callback left pointing at a dead receiver.
        _ = nl_socket_modify_cb(socket.pointer, NL_CB_VALID, NL_CB_DEFAULT, nil, nil)
        guard received >= 0 else { throw NetlinkError("reading \(what)", code: received) }
    }

    private static let trampoline: nl_recvmsg_msg_cb_t = { message, user in
        guard let message, let user, let header = nlmsg_hdr(message) else { return Int32(NL_SKIP.rawValue) }
        Unmanaged<Receiver>.fromOpaque(user).takeUnretainedValue().each(header)
        return Int32(NL_OK.rawValue)
    }

    /// The attributes after a fixed header of `Header`, indexed by type up to
    /// `highest`; nil when the message is too short or malformed.
    static func attributes<Header>(of message: UnsafeMutablePointer<nlmsghdr>, after _: Header.Type,
                                   highest: Int32) -> (header: Header, attributes: [UnsafeMutablePointer<nlattr>?])? {
        let size = Int32(MemoryLayout<Header>.size)
        guard nlmsg_datalen(message) >= size else { return nil }
        var attributes = [UnsafeMutablePointer<nlattr>?](repeating: nil, count: Int(highest) + 1)
        guard nlmsg_parse(message, size, &attributes, highest, nil) >= 0 else { return nil }
        return (nlmsg_data(message).loadUnaligned(as: Header.self), attributes)
    }
}
