import CLinuxShim
import Glibc
import UplinkCore

/// The agent's own connection to its MQTT broker, made by the agent. libmosquitto
/// creates its socket and connects as the main routing table says, which after a
/// failover may still be the dead uplink (the route hook not run yet, or not used at
/// all). So libmosquitto speaks MQTT (and TLS, end to end) through this SOCKS5 relay
/// on 127.0.0.1, and the relay makes the real connection where `OwnTrafficRoute`
/// says: bound to the current primary (SO_BINDTODEVICE, the broker's name resolved
/// through that uplink's own DNS, bound to it, as probes do), or as the kernel routes
/// it for a broker beside the gateway. No blocking name lookup runs on the loop.
///
/// One session at a time. The listener accepts only the connection whose far end is
/// libmosquitto's socket (`expect`): no other local program can borrow the agent's
/// CAP_NET_RAW to bind a connection to an uplink. Everything runs on the agent's
/// loop; the relay owns the listener and each `RelaySession` owns its two sockets.
package final class OwnTrafficRelay {
    /// A target not reached in this time is given up (the client sees the connection
    /// close and backs off as for any failed attempt).
    static let connectTimeoutMilliseconds = 10_000
    static let handshakeBytes = Socks5.maximumGreetingBytes + Socks5.maximumRequestBytes

    /// What the relay asks the agent, on the loop: the route to an address now, the
    /// current primary, and the DNS servers of an uplink (nil: the system's).
    package struct Wiring {
        package var route: (IPAddress) -> OwnTrafficRoute
        package var primary: () -> InterfaceName?
        package var servers: (InterfaceName?) -> DNSServers
        package var lookupTimeoutMilliseconds: Int

        package init(route: @escaping (IPAddress) -> OwnTrafficRoute, primary: @escaping () -> InterfaceName?,
                     servers: @escaping (InterfaceName?) -> DNSServers, lookupTimeoutMilliseconds: Int) {
            self.route = route
            self.primary = primary
            self.servers = servers
            self.lookupTimeoutMilliseconds = lookupTimeoutMilliseconds
        }
    }

    private let loop: EventLoop
    private let resolver: NameResolving
    private let wiring: Wiring
    private let listener: FileDescriptor
    /// The port libmosquitto is told to use as its SOCKS5 proxy.
    package let port: Int
    private var expectedPeerPort: Int?
    private var session: RelaySession?

    package init(loop: EventLoop, resolver: NameResolving, wiring: Wiring) throws(SystemError) {
        self.loop = loop
        self.resolver = resolver
        self.wiring = wiring
        let socket = FileDescriptor(owning: try Syscall.call("socket for the MQTT relay") {
            Glibc.socket(AF_INET, Int32(UPLINKD_SOCK_STREAM) | Int32(UPLINKD_SOCK_NONBLOCK) | Int32(UPLINKD_SOCK_CLOEXEC), 0)
        }, label: "MQTT relay listener")
        let bound = SocketAddress.with(IPAddress("127.0.0.1")!, port: 0) { bind(socket.rawValue, $0, $1) }
        guard bound == 0 else { throw SystemError("binding the MQTT relay to 127.0.0.1", errno: errno) }
        try Syscall.call("listening on the MQTT relay") { listen(socket.rawValue, 4) }
        guard let port = SocketAddress.port(of: socket.rawValue, peer: false) else {
            throw SystemError("reading the MQTT relay's port", errno: errno)
        }
        listener = socket
        self.port = port
        try loop.watch(socket.rawValue, for: .readable) { [weak self] _ in self?.accept() }
    }

    deinit { close() }

    /// The next connection to accept comes from this local port (libmosquitto's
    /// socket, just created); any other is closed at once.
    package func expect(localPort: Int) {
        expectedPeerPort = localPort
    }

    /// The client made a whole packet of what the broker sent (its bound starts again).
    package func packetDelivered() {
        session?.packetDelivered()
    }

    /// Where the current connection left: the uplink it is bound to, or nil.
    package var outboundInterface: InterfaceName? { session?.phase == .relaying ? session?.interface : nil }
    /// The relayed connection left by the kernel's routes for want of a primary.
    package var outboundAwaitsPrimary: Bool { session?.phase == .relaying && session?.awaitsPrimary == true }
    /// The uplink a connection still being made is bound to.
    package var connectingThrough: InterfaceName? { session?.phase == .connecting ? session?.interface : nil }

    /// Gives up the connection being made (its uplink stopped being the primary): the
    /// client is told it failed, and connects again.
    package func abandonConnecting() {
        guard let session, session.phase == .connecting else { return }
        Log.info("mqtt relay: giving up the connection through \(session.interface.map { "\($0)" } ?? "the kernel's routes"): not the primary any more")
        _ = session.answer(Socks5.reply(.networkUnreachable))
        session.close()
    }
    /// TCP_USER_TIMEOUT (netinet/tcp.h), and how long sent data may stay unacknowledged.
    static let tcpUserTimeout: Int32 = 18
    static let userTimeoutMilliseconds = 20_000

    /// Segments the relay's connections sent and received through each uplink, over
    /// every session (a closed session's last figures kept): the agent's own traffic,
    /// which the primary's counters must not take for the LAN's.
    package func ownSegments(on uplink: InterfaceName) -> (sent: UInt64, received: UInt64) {
        account()
        return carried[uplink] ?? (0, 0)
    }

    /// Totals of closed sessions and what the open one had carried at the last look.
    private var carried: [InterfaceName: (sent: UInt64, received: UInt64)] = [:]
    private var lastSeen: (sent: UInt64, received: UInt64) = (0, 0)

    /// Adds what the open session carried since the last look to its uplink's total.
    private func account() {
        guard let session, let uplink = session.interface, let now = session.outboundSegments else { return }
        let total = carried[uplink] ?? (0, 0)
        carried[uplink] = (total.sent + (now.sent &- lastSeen.sent), total.received + (now.received &- lastSeen.received))
        lastSeen = now
    }

    /// At the agent's stop: what libmosquitto wrote last (the goodbye) is passed on as
    /// far as it can go without waiting, then everything is closed. Loopback hands it
    /// over at once and the outbound socket's buffer takes a few small packets; the
    /// kernel sends them after the close.
    package func finish() {
        session?.pump()
        close()
    }

    package func close() {
        session?.close()
        session = nil
        if listener.isOpen {
            loop.unwatch(listener.rawValue)
            listener.close()
        }
    }

    // MARK: the client's side

    private func accept() {
        while true {
            let raw = uplinkd_accept4(listener.rawValue, Int32(UPLINKD_SOCK_NONBLOCK) | Int32(UPLINKD_SOCK_CLOEXEC))
            guard raw >= 0 else { return }
            let client = FileDescriptor(owning: raw, label: "MQTT relay client")
            guard let expected = expectedPeerPort, SocketAddress.port(of: raw, peer: true) == expected else {
                Log.warning("mqtt relay: refused a local connection that is not the agent's own MQTT client")
                continue   // closed as `client` goes
            }
            expectedPeerPort = nil
            session?.close()
            let fresh = RelaySession(loop: loop, client: client)
            fresh.onClosing = { [weak self] in self?.account() }
            fresh.onClose = { [weak self, weak fresh] in
                guard let self, let fresh, self.session === fresh else { return }
                self.session = nil
            }
            session = fresh
            watchHandshake(fresh)
        }
    }

    private func watchHandshake(_ session: RelaySession) {
        do {
            try loop.watch(session.client.rawValue, for: .readable) { [weak self, weak session] _ in
                guard let self, let session else { return }
                self.handshake(session)
            }
        } catch {
            Log.warning("mqtt relay: \(error)")
            session.close()
        }
    }

    /// Reads the greeting and the request as far as they have arrived.
    private func handshake(_ session: RelaySession) {
        guard session.readClient(limit: OwnTrafficRelay.handshakeBytes) else { return session.close() }
        if session.phase == .greeting {
            switch Socks5.greeting(session.fromClient[...]) {
            case .incomplete: return
            case .invalid(let why): return refuse(session, why)
            case .complete(_, let bytes):
                session.fromClient.removeFirst(bytes)
                guard session.answer(Socks5.methodChosen) else { return session.close() }
                session.phase = .request
            }
        }
        switch Socks5.request(session.fromClient[...]) {
        case .incomplete:
            return
        case .invalid(let why):
            refuse(session, why)
        case .complete(let target, let bytes):
            session.fromClient.removeFirst(bytes)
            loop.unwatch(session.client.rawValue)
            session.phase = .connecting
            session.connectTimer = loop.schedule(afterMilliseconds: OwnTrafficRelay.connectTimeoutMilliseconds) { [weak session] in
                guard let session, session.phase == .connecting else { return }
                Log.info("mqtt relay: \(target) not reached within \(OwnTrafficRelay.connectTimeoutMilliseconds / 1_000) s")
                session.close()
            }
            open(target, for: session)
        }
    }

    private func refuse(_ session: RelaySession, _ why: String) {
        Log.warning("mqtt relay: refused: \(why)")
        _ = session.answer(Socks5.reply(.generalFailure))
        session.close()
    }

    // MARK: the target's side

    /// Resolves a name through the primary's DNS (bound to it), else the system's
    /// servers, IPv4 first; an address is connected to as it is.
    private func open(_ target: Socks5.Target, for session: RelaySession) {
        switch target.host {
        case .address(let address):
            connect(address, port: target.port, for: session)
        case .name(let name):
            resolve(name, families: [.ipv4, .ipv6], port: target.port, for: session)
        }
    }

    private func resolve(_ name: String, families: [AddressFamily], port: Int, for session: RelaySession) {
        guard let family = families.first else {
            Log.info("mqtt relay: cannot resolve \(name)")
            _ = session.answer(Socks5.reply(.hostUnreachable))
            return session.close()
        }
        let primary = wiring.primary()
        let servers = wiring.servers(primary)
        let done = { [weak self, weak session] (lookup: DNSLookup) in
            guard let self, let session, session.phase == .connecting else { return }
            if case .success(let answer) = lookup.result, let address = answer.addresses.first {
                self.connect(address, port: port, for: session)
            } else {
                self.resolve(name, families: Array(families.dropFirst()), port: port, for: session)
            }
        }
        if let primary {
            resolver.resolve(name, family: family, on: primary, through: servers,
                             timeoutMilliseconds: wiring.lookupTimeoutMilliseconds, completion: done)
        } else {
            resolver.resolve(name, family: family, interface: nil, servers: servers.ordered(for: family),
                             timeoutMilliseconds: wiring.lookupTimeoutMilliseconds, completion: done)
        }
    }

    private func connect(_ address: IPAddress, port: Int, for session: RelaySession) {
        let route = wiring.route(address)
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let raw = Glibc.socket(domain, Int32(UPLINKD_SOCK_STREAM) | Int32(UPLINKD_SOCK_NONBLOCK) | Int32(UPLINKD_SOCK_CLOEXEC), 0)
        guard raw >= 0 else { return failed(session, SystemError("socket for the MQTT connection", errno: errno)) }
        let socket = FileDescriptor(owning: raw, label: "MQTT connection")
        // A dead path ends the connection within this time even while only the agent
        // writes to it (an event sent into a connection whose uplink died): the
        // session then connects again through the current primary.
        var unacknowledgedMilliseconds = UInt32(OwnTrafficRelay.userTimeoutMilliseconds)
        setsockopt(raw, Int32(IPPROTO_TCP), OwnTrafficRelay.tcpUserTimeout, &unacknowledgedMilliseconds,
                   socklen_t(MemoryLayout<UInt32>.size))
        session.awaitsPrimary = route == .unrouted
        if case .primary(let uplink) = route {
            let bound = uplink.value.withCString { name in
                setsockopt(raw, SOL_SOCKET, SO_BINDTODEVICE, name, socklen_t(strlen(name) + 1))
            }
            guard bound == 0 else {
                return failed(session, SystemError("binding the MQTT connection to \(uplink)", errno: errno))
            }
            session.interface = uplink
        } else {
            session.interface = nil
        }
        let result = SocketAddress.with(address, port: port) { Glibc.connect(raw, $0, $1) }
        guard result == 0 || errno == EINPROGRESS else {
            return failed(session, SystemError("connecting to \(address) port \(port)", errno: errno))
        }
        session.connecting(socket)
        do {
            try loop.watch(raw, for: .writable) { [weak self, weak session] _ in
                guard let self, let session else { return }
                self.finishConnect(session, to: address, port: port)
            }
        } catch {
            failed(session, error)
        }
    }

    private func finishConnect(_ session: RelaySession, to address: IPAddress, port: Int) {
        guard session.phase == .connecting, let socket = session.outbound else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(socket.rawValue, SOL_SOCKET, SO_ERROR, &code, &length)
        guard code == 0 else { return failed(session, SystemError("connecting to \(address) port \(port)", errno: code)) }
        if let timer = session.connectTimer { loop.cancel(timer) }
        session.connectTimer = nil
        Log.debug("mqtt relay: connected to \(address) port \(port)\(session.interface.map { " through \($0)" } ?? "")")
        guard session.answer(Socks5.reply(.succeeded)) else { return session.close() }
        lastSeen = (0, 0)
        session.startRelaying(socket)
    }

    private func failed(_ session: RelaySession, _ error: SystemError) {
        Log.info("mqtt relay: \(error)")
        let outcome: Socks5.Outcome
        switch error.errno {
        case ECONNREFUSED: outcome = .connectionRefused
        case ENETUNREACH: outcome = .networkUnreachable
        case EHOSTUNREACH: outcome = .hostUnreachable
        default: outcome = .generalFailure
        }
        _ = session.answer(Socks5.reply(outcome))
        session.close()
    }
}
