import CAres
import CAresShim
import Glibc
import UplinkCore

/// Resolves host names through given servers with every query socket bound to one
/// interface (SO_BINDTODEVICE), so a backup uplink's names are answered by its own
/// resolver over its own link, never by the primary's. c-ares does the DNS; this
/// drives it from the event loop through its socket-state callback and timeouts.
///
/// Ownership: every lookup owns one c-ares channel. c-ares gets *unretained*
/// pointers to the `Lookup` (socket-state data, socket-creation data, query
/// argument); the resolver keeps the Lookup in `active` until its channel has been
/// destroyed, which happens from the loop after the answer, never inside a c-ares
/// callback (c-ares forbids that).
package final class DNSResolver: NameResolving {
    private let loop: EventLoop
    private var active: [ObjectIdentifier: Lookup] = [:]

    private static let libraryInit: Int32 = ares_library_init(ARES_LIB_INIT_ALL)

    package init(loop: EventLoop) {
        self.loop = loop
    }

    deinit {
        for lookup in active.values { lookup.destroy() }
    }

    /// Resolves `name` to addresses of `family` through `servers`, asked in order,
    /// over `interface` only (nil: unbound, for a local cache on loopback).
    /// `completion` runs once, on the loop, within about `timeoutMilliseconds`.
    package func resolve(_ name: String, family: AddressFamily, interface: InterfaceName?, servers: [IPAddress],
                        timeoutMilliseconds: Int,
                        completion: @escaping (DNSLookup) -> Void) {
        guard !servers.isEmpty else {
            let failure = DNSFailure(kind: .noServers, code: 0, message: "no DNS servers known")
            loop.schedule(afterMilliseconds: 0) { completion(DNSLookup(result: .failure(failure), bytes: 0)) }
            return
        }
        guard DNSResolver.libraryInit == uplinkd_ares_success else {
            let failure = DNSFailure.status(DNSResolver.libraryInit)
            loop.schedule(afterMilliseconds: 0) { completion(DNSLookup(result: .failure(failure), bytes: 0)) }
            return
        }
        // Always answered from a later turn of the loop, even when c-ares fails at
        // once inside ares_getaddrinfo: callers may still be registering waiters.
        let lookup = Lookup(loop: loop, interface: interface?.value) { [loop] result in
            loop.schedule(afterMilliseconds: 0) { completion(result) }
        }
        active[ObjectIdentifier(lookup)] = lookup
        lookup.onDone = { [weak self] finished in
            // Destroy the channel from the loop, outside every c-ares callback.
            self?.loop.schedule(afterMilliseconds: 0) { [weak self] in
                finished.destroy()
                self?.active.removeValue(forKey: ObjectIdentifier(finished))
            }
        }
        lookup.start(name: name, family: family, servers: servers, timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// One name, one family, one channel.
private final class Lookup {
    let loop: EventLoop
    /// NUL-terminated interface name for SO_BINDTODEVICE; nil for unbound lookups.
    let interface: [CChar]?
    var channel: ares_channel?
    var completion: ((DNSLookup) -> Void)?
    /// What the channel's sockets carried (counted by the c-ares shim); freed with the
    /// lookup, after the channel was destroyed.
    let traffic: UnsafeMutablePointer<uplinkd_ares_traffic>
    var onDone: ((Lookup) -> Void)?
    var watched: Set<Int32> = []
    var retryTimer: EventLoop.TimerID?
    var deadlineTimer: EventLoop.TimerID?
    /// errno of a failed SO_BINDTODEVICE, to tell "cannot bind" from "no answer".
    var bindErrno: Int32 = 0

    init(loop: EventLoop, interface: String?, completion: @escaping (DNSLookup) -> Void) {
        traffic = .allocate(capacity: 1)
        traffic.initialize(to: uplinkd_ares_traffic())
        self.loop = loop
        self.interface = interface.map { Array($0.utf8CString) }
        self.completion = completion
    }

    func start(name: String, family: AddressFamily, servers: [IPAddress], timeoutMilliseconds: Int) {
        let user = Unmanaged.passUnretained(self).toOpaque()
        // Each server is tried up to three times, the tries spread over the time limit
        // (c-ares doubles the per-try timeout on each pass: 1 + 2 + 4 = 7 shares), so
        // one lost datagram on a lossy uplink costs a retry, not the lookup; fewer
        // tries when a share would fall under 100 ms.
        let serverCount = max(1, servers.count)
        let tries = (1...3).last { timeoutMilliseconds / (((1 << $0) - 1) * serverCount) >= 100 } ?? 1
        let perTry = max(50, timeoutMilliseconds / (((1 << tries) - 1) * serverCount))
        var status = uplinkd_ares_channel_new(&channel, Int32(perTry), Int32(tries), Lookup.socketStateTrampoline, user)
        guard status == uplinkd_ares_success, let channel else { return finish(.failure(.status(status))) }
        // The configure callback runs before connect(): binding later would leave the
        // route and source address chosen through the primary.
        // The shim opens the sockets (non-blocking, close-on-exec) to count their bytes.
        uplinkd_ares_count_traffic(channel, traffic)
        if interface != nil { ares_set_socket_configure_callback(channel, Lookup.socketCreatedTrampoline, user) }
        let list = servers.map { $0.family == .ipv6 ? "[\($0)]:53" : "\($0):53" }.joined(separator: ",")
        status = ares_set_servers_ports_csv(channel, list)
        guard status == uplinkd_ares_success else { return finish(.failure(.status(status))) }

        deadlineTimer = loop.schedule(afterMilliseconds: timeoutMilliseconds) { [weak self] in
            self?.deadlineTimer = nil
            self?.finish(.failure(DNSFailure(kind: .timeout, code: Int(uplinkd_ares_etimeout), message: "no answer within \(timeoutMilliseconds) ms")))
        }
        var hints = ares_addrinfo_hints()
        hints.ai_flags = ARES_AI_NOSORT
        hints.ai_family = family == .ipv4 ? AF_INET : AF_INET6
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        ares_getaddrinfo(channel, name, nil, &hints, Lookup.answerTrampoline, user)
        rearmRetryTimer()
    }

    // MARK: c-ares callbacks (non-capturing; `self` comes back from the user pointer)

    private static let socketStateTrampoline: ares_sock_state_cb = { user, socket, readable, writable in
        Unmanaged<Lookup>.fromOpaque(user!).takeUnretainedValue().socketChanged(socket, readable != 0, writable != 0)
    }

    private static let socketCreatedTrampoline: ares_sock_create_callback = { socket, _, user in
        Unmanaged<Lookup>.fromOpaque(user!).takeUnretainedValue().bind(socket)
    }

    private static let answerTrampoline: ares_addrinfo_callback = { user, status, _, result in
        let lookup = Unmanaged<Lookup>.fromOpaque(user!).takeUnretainedValue()
        defer { if let result { ares_freeaddrinfo(result) } }
        guard status == uplinkd_ares_success, let result else {
            if lookup.bindErrno != 0 {
                let error = SystemError("binding DNS query to interface", errno: lookup.bindErrno)
                return lookup.finish(.failure(DNSFailure(kind: .bindFailed, code: Int(lookup.bindErrno), message: "\(error)")))
            }
            return lookup.finish(.failure(.status(status)))
        }
        lookup.finish(.success(DNSAnswer(addresses: Lookup.addresses(in: result.pointee.nodes),
                                         ttlSeconds: Lookup.ttlSeconds(of: result.pointee))))
    }

    /// SO_BINDTODEVICE on every query socket, UDP and TCP alike, before it connects
    /// (so routing and the source address are the uplink's). A socket that cannot
    /// be bound is refused (c-ares then gives up on that server) instead of leaving
    /// through whatever route the primary uplink offers.
    private func bind(_ socket: Int32) -> Int32 {
        guard let interface else { return 0 }
        let result = interface.withUnsafeBufferPointer { name in
            setsockopt(socket, SOL_SOCKET, SO_BINDTODEVICE, name.baseAddress, socklen_t(name.count))
        }
        if result != 0 {
            bindErrno = errno
            return -1
        }
        return 0
    }

    private func socketChanged(_ socket: Int32, _ readable: Bool, _ writable: Bool) {
        guard readable || writable else {
            watched.remove(socket)
            loop.unwatch(socket)
            return
        }
        var interest: EventLoop.Interest = []
        if readable { interest.insert(.readable) }
        if writable { interest.insert(.writable) }
        do {
            try loop.watch(socket, for: interest) { [weak self] readiness in
                self?.process(socket, readiness)
            }
            watched.insert(socket)
        } catch {
            Log.warning("cannot watch DNS socket: \(error)")
        }
    }

    private func process(_ socket: Int32, _ readiness: EventLoop.Readiness) {
        guard let channel else { return }
        let read = readiness.readable || readiness.failed ? socket : ARES_SOCKET_BAD
        let write = readiness.writable ? socket : ARES_SOCKET_BAD
        ares_process_fd(channel, read, write)
        rearmRetryTimer()
    }

    /// c-ares retries and gives up on its own clock; it is asked after every step
    /// when it next needs to run.
    private func rearmRetryTimer() {
        if let retryTimer { loop.cancel(retryTimer) }
        retryTimer = nil
        guard let channel, completion != nil else { return }
        var next = timeval()
        guard ares_timeout(channel, nil, &next) != nil else { return }
        // Rounded up, so the timer never fires before c-ares has something to do.
        let milliseconds = Int(next.tv_sec) * 1_000 + (Int(next.tv_usec) + 999) / 1_000
        retryTimer = loop.schedule(afterMilliseconds: milliseconds) { [weak self] in
            guard let self, let channel = self.channel else { return }
            self.retryTimer = nil
            ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD)
            self.rearmRetryTimer()
        }
    }

    deinit {
        traffic.deinitialize(count: 1)
        traffic.deallocate()
    }

    private func finish(_ result: Result<DNSAnswer, DNSFailure>) {
        guard let completion else { return }
        self.completion = nil
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        if let retryTimer { loop.cancel(retryTimer) }
        deadlineTimer = nil
        retryTimer = nil
        completion(DNSLookup(result: result, bytes: Int(traffic.pointee.ip_bytes)))
        onDone?(self)
        onDone = nil
    }

    /// Tears the channel down; c-ares reports its sockets closed on the way (and
    /// calls a still-pending query back with ARES_EDESTRUCTION, which `finish` ignores
    /// once a result went out).
    func destroy() {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        if let retryTimer { loop.cancel(retryTimer) }
        deadlineTimer = nil
        retryTimer = nil
        completion = nil
        if let channel { ares_destroy(channel) }
        channel = nil
        for socket in watched { loop.unwatch(socket) }
        watched = []
    }

    /// The answer's lifetime: the smallest TTL of its records, CNAMEs included.
    static func ttlSeconds(of result: ares_addrinfo) -> Int {
        var smallest = Int.max
        var node = result.nodes
        while let current = node {
            smallest = min(smallest, Int(max(0, current.pointee.ai_ttl)))
            node = current.pointee.ai_next
        }
        var alias = result.cnames
        while let current = alias {
            smallest = min(smallest, Int(max(0, current.pointee.ttl)))
            alias = current.pointee.next
        }
        return smallest == Int.max ? 0 : smallest
    }

    static func addresses(in first: UnsafeMutablePointer<ares_addrinfo_node>?) -> [IPAddress] {
        var result: [IPAddress] = []
        var node = first
        while let current = node {
            if let address = current.pointee.ai_addr, let parsed = ipAddress(address), !result.contains(parsed) {
                result.append(parsed)
            }
            node = current.pointee.ai_next
        }
        return result
    }

    static func ipAddress(_ address: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafeBytes(of: v4.pointee.sin_addr) { IPAddress(family: .ipv4, bytes: Array($0)) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafeBytes(of: v6.pointee.sin6_addr) { IPAddress(family: .ipv6, bytes: Array($0)) }
            }
        default:
            return nil
        }
    }
}
