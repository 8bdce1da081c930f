import CNetlink
import Glibc

/// Tells when any nftables ruleset changes (another tool's `nft flush ruleset`, a
/// firewall reload, the agent's own change): a netfilter netlink socket in the
/// NFNLGRP_NFTABLES group. The messages are only a wake-up; what changed is read
/// with `nft list`. Its descriptor is watched on the agent's loop; freed with it.
final class NftablesWatch {
    /// NFNLGRP_NFTABLES in linux/netfilter/nfnetlink.h.
    private static let nftablesGroup: Int32 = 7
    private let socket: NetlinkSocket
    private let loop: EventLoop
    private var buffer = [UInt8](repeating: 0, count: 16_384)

    init(loop: EventLoop) throws(NetlinkError) {
        socket = try NetlinkSocket(connect: false)
        self.loop = loop
        nl_socket_disable_seq_check(socket.pointer)
        let connected = nl_connect(socket.pointer, NETLINK_NETFILTER)
        guard connected >= 0 else { throw NetlinkError("connecting to netfilter netlink", code: connected) }
        let joined = nl_socket_add_membership(socket.pointer, NftablesWatch.nftablesGroup)
        guard joined >= 0 else { throw NetlinkError("joining the nftables change group", code: joined) }
        _ = nl_socket_set_nonblocking(socket.pointer)
    }

    /// `changed` runs on the loop after each batch of change messages.
    func start(changed: @escaping () -> Void) throws(SystemError) {
        let descriptor = nl_socket_get_fd(socket.pointer)
        try loop.watch(descriptor, for: .readable) { [unowned self] _ in
            // Drained whole: one wake-up per batch, however many messages it held.
            var any = false
            while recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 || errno == ENOBUFS { any = true }
            if any { changed() }
        }
    }

    deinit { loop.unwatch(nl_socket_get_fd(socket.pointer)) }
}
