import CNetlink

/// A connected rtnetlink socket, freed with the object.
final class NetlinkSocket {
    let pointer: OpaquePointer

    init(connect: Bool = true) throws(NetlinkError) {
        guard let socket = nl_socket_alloc() else { throw NetlinkError("nl_socket_alloc", code: NLE_NOMEM) }
        pointer = socket
        if connect {
            let connected = nl_connect(socket, NETLINK_ROUTE)
            guard connected >= 0 else {
                nl_socket_free(socket)
                throw NetlinkError("connecting to rtnetlink", code: connected)
            }
        }
    }

    deinit { nl_socket_free(pointer) }
}
