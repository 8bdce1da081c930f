import CLinuxShim
import Glibc
import UplinkCore

/// One connection through `OwnTrafficRelay`: libmosquitto's end (the client), and
/// once the relay reached the target, the outbound socket. Bytes move between them in
/// bounded buffers: a side's reading stops while the other side's buffer is full.
/// Both descriptors are owned here and watched on the loop while the session lives;
/// `close` unwatches and closes both, once.
final class RelaySession {
    /// Most bytes waiting for either side: MQTT packets of the agent are small, and a
    /// peer that stops reading must not grow the agent's memory.
    static let bufferBytes = 64 * 1_024
    /// Most bytes the broker may send before the client reports a whole packet
    /// (`packetDelivered`). The agent receives acknowledgements and one-word
    /// messages; libmosquitto allocates what a packet's header announces and fills it
    /// as bytes come, so a broker announcing 256 MB would grow the agent's memory by
    /// every byte it sends. TLS hides the packets from the relay; this bound does not
    /// need to see them.
    static let inboundBytesWithoutAPacket = 256 * 1_024

    enum Phase { case greeting, request, connecting, relaying, closed }

    private let loop: EventLoop
    let client: FileDescriptor
    private(set) var outbound: FileDescriptor?
    var phase = Phase.greeting
    /// From the client: the handshake so far, then what waits for the target.
    var fromClient: [UInt8] = []
    private var toClient: [UInt8] = []
    /// Where the outbound connection left: the uplink it is bound to, or nil.
    var interface: InterfaceName?
    /// Left by the kernel's routes because there was no primary yet.
    var awaitsPrimary = false
    var connectTimer: EventLoop.TimerID?
    /// Called once when the session ends (either side closed or failed): before its
    /// sockets close (their last figures can still be read), then after.
    var onClosing: (() -> Void)?
    var onClose: (() -> Void)?
    private var buffer = [UInt8](repeating: 0, count: 16 * 1_024)
    /// Bytes from the target since the client last reported a whole packet.
    private var inboundSinceAPacket = 0

    /// The client made a whole packet of what came (an acknowledgement, a message).
    func packetDelivered() {
        inboundSinceAPacket = 0
    }

    init(loop: EventLoop, client: FileDescriptor) {
        self.loop = loop
        self.client = client
    }

    /// Segments the outbound connection sent and received so far (TCP_INFO).
    var outboundSegments: (sent: UInt64, received: UInt64)? {
        guard let outbound, phase == .relaying else { return nil }
        var totals = uplinkd_tcp_totals()
        guard uplinkd_tcp_totals(outbound.rawValue, &totals) == 0 else { return nil }
        return (UInt64(totals.segments_sent), UInt64(totals.segments_received))
    }

    /// Reads what the client sent into `fromClient`, up to `limit` bytes held; false at
    /// its end or on an error.
    func readClient(limit: Int) -> Bool {
        guard let count = read(client, limit: limit - fromClient.count) else { return true }
        guard count > 0 else { return false }
        fromClient += buffer[0..<count]
        return true
    }

    /// Writes a handshake answer; small enough for a fresh loopback socket's buffer.
    func answer(_ bytes: [UInt8]) -> Bool {
        (try? client.write(bytes[...])) == bytes.count
    }

    /// The outbound socket is connected: bytes flow both ways from now on.
    func startRelaying(_ socket: FileDescriptor) {
        outbound = socket
        phase = .relaying
        pump()
    }

    /// Moves what can move without blocking, then watches for what it waits on.
    func pump() {
        guard phase == .relaying, let outbound else { return }
        if !flush(&fromClient, to: outbound) || !flush(&toClient, to: client) { return close() }
        var clientOpen = true, outboundOpen = true
        if fromClient.count < RelaySession.bufferBytes { clientOpen = readClient(limit: RelaySession.bufferBytes) }
        if toClient.count < RelaySession.bufferBytes {
            if let count = read(outbound, limit: RelaySession.bufferBytes - toClient.count) {
                if count == 0 { outboundOpen = false } else { toClient += buffer[0..<count] }
                inboundSinceAPacket += count
            }
        }
        if inboundSinceAPacket > RelaySession.inboundBytesWithoutAPacket {
            Log.warning("mqtt relay: the broker sent more than \(RelaySession.inboundBytesWithoutAPacket / 1_024) KiB "
                        + "without a packet the agent could use (it expects acknowledgements and short messages); closing")
            return close()
        }
        if !flush(&fromClient, to: outbound) || !flush(&toClient, to: client) { return close() }
        // A side that ended: what it sent is passed on, then the session ends (MQTT has
        // no half-closed connection).
        guard clientOpen, outboundOpen else { return close() }
        watch(client, reading: fromClient.count < RelaySession.bufferBytes, writing: !toClient.isEmpty)
        watch(outbound, reading: toClient.count < RelaySession.bufferBytes, writing: !fromClient.isEmpty)
    }

    private func watch(_ descriptor: FileDescriptor, reading: Bool, writing: Bool) {
        var interest: EventLoop.Interest = []
        if reading { interest.insert(.readable) }
        if writing { interest.insert(.writable) }
        do {
            try loop.watch(descriptor.rawValue, for: interest) { [weak self] _ in self?.pump() }
        } catch {
            Log.warning("mqtt relay: \(error)")
            close()
        }
    }

    /// The outbound socket while it connects (the relay watches it).
    func connecting(_ socket: FileDescriptor) {
        outbound = socket
        phase = .connecting
    }

    func close() {
        guard phase != .closed else { return }
        onClosing?()
        phase = .closed
        if let connectTimer { loop.cancel(connectTimer) }
        for descriptor in [client, outbound].compactMap({ $0 }) where descriptor.isOpen {
            loop.unwatch(descriptor.rawValue)
            descriptor.close()
        }
        onClose?()
    }

    /// One non-blocking read of at most `limit` bytes into `buffer`: its count (0 at the
    /// end), nil when nothing is there yet; an error counts as the end.
    private func read(_ descriptor: FileDescriptor, limit: Int) -> Int? {
        guard limit > 0 else { return nil }
        let wanted = min(limit, buffer.count)
        let raw = descriptor.rawValue
        let count = buffer.withUnsafeMutableBytes { Glibc.read(raw, $0.baseAddress, wanted) }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? nil : 0 }
        return count
    }

    /// Writes what it can of `bytes` to `descriptor`; false on an error.
    private func flush(_ bytes: inout [UInt8], to descriptor: FileDescriptor) -> Bool {
        guard !bytes.isEmpty else { return true }
        do {
            guard let written = try descriptor.write(bytes[...]) else { return true }
            bytes.removeFirst(written)
            return true
        } catch {
            return false
        }
    }
}
