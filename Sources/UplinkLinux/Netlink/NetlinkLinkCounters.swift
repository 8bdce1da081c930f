import CNetlink
import Glibc
import UplinkCore

/// Reads uplinks' 64-bit link statistics for their data plans.
package protocol LinkCounting: AnyObject {
    /// The counters of these interfaces now (those that exist).
    func readings(of names: Set<InterfaceName>) -> [InterfaceName: CounterReading]
    /// Called on the loop with a device's last counters when the kernel removes it.
    var onRemoved: ((InterfaceName, CounterReading) -> Void)? { get set }
    /// Reports the removals already queued; called before `readings`, so a removed
    /// device's last counters are always taken before its successor's first ones.
    func catchUp()
}

/// The kernel's link statistics over rtnetlink: an RTM_GETLINK dump (IFLA_STATS64,
/// the interface index and its hardware type, one consistent snapshot per device) for
/// each reading, and a socket in the link multicast group for RTM_DELLINK, whose
/// statistics are the device's last word: what a modem's interface carried between
/// the last reading and its removal is counted, not lost. Devices are told apart by
/// index within a boot (`/proc/sys/kernel/random/boot_id`).
///
/// Ownership: both sockets belong to this object; the listener's callback gets an
/// unretained pointer to it, valid because the socket (and its callback) is freed
/// with the object.
package final class NetlinkLinkCounters: LinkCounting {
    package var onRemoved: ((InterfaceName, CounterReading) -> Void)?

    private let loop: EventLoop
    private let dumpSocket: NetlinkSocket
    private let listenSocket: NetlinkSocket
    private let descriptor: Int32
    private let bootID: String
    /// Removals parsed by the callback, reported after the read.
    private var removed: [(InterfaceName, CounterReading)] = []
    /// ENOBUFS was logged (once: a lost removal costs at most one reading's bytes).
    private var overflowLogged = false

    package init(loop: EventLoop, bootIDPath: String = "/proc/sys/kernel/random/boot_id") throws(NetlinkError) {
        self.loop = loop
        dumpSocket = try NetlinkSocket()
        listenSocket = try NetlinkSocket()
        bootID = NetlinkLinkCounters.readBootID(bootIDPath)
        let socket = listenSocket.pointer
        nl_socket_disable_seq_check(socket)
        let joined = nl_socket_add_membership(socket, Int32(RTNLGRP_LINK.rawValue))
        guard joined >= 0 else { throw NetlinkError("joining the link notifications", code: joined) }
        let nonblocking = nl_socket_set_nonblocking(socket)
        guard nonblocking >= 0 else { throw NetlinkError("making the link notification socket non-blocking", code: nonblocking) }
        descriptor = nl_socket_get_fd(socket)
        let user = Unmanaged.passUnretained(self).toOpaque()
        let modified = nl_socket_modify_cb(socket, NL_CB_VALID, NL_CB_CUSTOM, NetlinkLinkCounters.trampoline, user)
        guard modified >= 0 else { throw NetlinkError("reading link notifications", code: modified) }
        do {
            try loop.watch(descriptor, for: .readable) { [weak self] _ in self?.catchUp() }
        } catch {
            throw NetlinkError("watching the link notification socket: \(error)", code: NLE_FAILURE)
        }
    }

    deinit {
        loop.unwatch(descriptor)
    }

    private static let trampoline: nl_recvmsg_msg_cb_t = { message, user in
        guard let message, let user, let header = nlmsg_hdr(message) else { return Int32(NL_SKIP.rawValue) }
        let counters = Unmanaged<NetlinkLinkCounters>.fromOpaque(user).takeUnretainedValue()
        if header.pointee.nlmsg_type == UInt16(RTM_DELLINK), var parsed = counters.parse(header) {
            parsed.1.isRemoval = true
            counters.removed.append(parsed)
        }
        return Int32(NL_OK.rawValue)
    }

    package func catchUp() {
        // Bounded: each call reads one batch; a flood of link changes is read on the
        // loop's next turns.
        for _ in 0..<64 {
            let result = nl_recvmsgs_default(listenSocket.pointer)
            if result == 0 || -result == NLE_AGAIN { break }
            if result < 0 {
                if -result == NLE_NOMEM && !overflowLogged {
                    overflowLogged = true
                    Log.warning("link notifications overflowed: a removed device's last counters may be lost (data plans)")
                } else if -result != NLE_NOMEM {
                    Log.warning("\(NetlinkError("reading link notifications", code: result))")
                }
                break
            }
        }
        let report = removed
        removed = []
        for (name, reading) in report { onRemoved?(name, reading) }
    }

    package func readings(of names: Set<InterfaceName>) -> [InterfaceName: CounterReading] {
        guard !names.isEmpty else { return [:] }
        var readings: [InterfaceName: CounterReading] = [:]
        do {
            try NetlinkDump.run(dumpSocket, type: Int32(RTM_GETLINK), header: ifinfomsg(), what: "the links' counters") { message in
                guard let (name, reading) = self.parse(message), names.contains(name) else { return }
                readings[name] = reading
            }
        } catch {
            Log.warning("\(error)")
        }
        return readings
    }

    /// A link message's name and counters; nil without statistics.
    private func parse(_ message: UnsafeMutablePointer<nlmsghdr>) -> (InterfaceName, CounterReading)? {
        guard let (link, attributes) = NetlinkDump.attributes(of: message, after: ifinfomsg.self,
                                                              highest: Int32(__IFLA_MAX) - 1),
              let nameAttribute = attributes[Int(IFLA_IFNAME)],
              let statsAttribute = attributes[Int(IFLA_STATS64)],
              Int(nla_len(statsAttribute)) >= MemoryLayout<rtnl_link_stats64>.size,
              let name = InterfaceName(String(cString: nla_get_string(nameAttribute))) else { return nil }
        let stats = UnsafeRawPointer(nla_data(statsAttribute)).loadUnaligned(as: rtnl_link_stats64.self)
        return (name, CounterReading(
            device: DeviceIdentity(bootID: bootID, index: Int(link.ifi_index)),
            receivedBytes: stats.rx_bytes, transmittedBytes: stats.tx_bytes,
            receivedPackets: stats.rx_packets, transmittedPackets: stats.tx_packets,
            headerBytes: CounterReading.headerBytes(hardwareType: Int(link.ifi_type))))
    }

    /// The kernel's boot id: after a reboot every device is a new one. Without it (an
    /// odd kernel), counters that went down still tell a new device.
    private static func readBootID(_ path: String) -> String {
        let text = SmallFile.read(path, limit: 256)?.trimmingWhitespace ?? ""
        return PlanFileFormat.isToken(text) ? text : "unknown"
    }
}
