import CCurl
import CCurlShim
import CLinuxShim
import Glibc
import UplinkCore

/// Runs HTTP probes in parallel on one libcurl multi handle, driven by the event loop
/// through libcurl's socket and timer callbacks (the design swift-corelibs-foundation's
/// MultiHandle uses). Every probe is bound to its interface with SO_BINDTODEVICE
/// (`CURLOPT_INTERFACE "if!NAME"`), uses one address family, never follows redirects,
/// and reads at most `bodyLimitBytes` of body.
///
/// Ownership: the prober owns the multi handle and every easy handle with its
/// `CurlTransfer`. libcurl gets *unretained* pointers to the prober (socket, timer and
/// close-socket user data) and to each CurlTransfer (write and open-socket user data);
/// both outlive every callback because handles are removed from the multi handle
/// before a CurlTransfer is released, sockets open only while their transfer runs, and the
/// multi handle (with any connection libcurl still holds) is cleaned up in `deinit`.
/// Sockets are opened and closed by the prober so their TCP_INFO can be read before
/// the close: the bytes counted are the ones on the wire.
package final class HTTPProber: ProbeSending {
    private let loop: EventLoop
    private let multi: UnsafeMutableRawPointer
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var curlTimer: EventLoop.TimerID?
    private var watchedSockets: Set<Int32> = []
    /// DNS caches for pinned answers, one per interface and family, with the number of
    /// transfers using each: libcurl's own cache is per multi handle, and an answer
    /// pinned for one uplink must never serve another.
    private var pinCaches: [PinCacheKey: (share: UnsafeMutableRawPointer, users: Int)] = [:]
    /// Which transfer opened each open probe socket, so its bytes are counted when
    /// libcurl closes it (through the prober, which outlives every socket).
    private var socketOwners: [Int32: CurlTransfer] = [:]

    /// Whether a prober may make TLS connections (https probes, the captive-portal
    /// API). Setting TLS up in full (OpenSSL's configuration file, every cipher and
    /// digest name, its error strings) costs a one-shot `check` about 0.6 ms and
    /// 1.2 MiB; one whose probes and API are all plain HTTP skips it.
    package enum TLS: Sendable {
        case available
        /// Plain HTTP only: an https request is refused before libcurl sees it.
        case notNeeded
    }

    /// What the first prober of the process chose: libcurl and OpenSSL are set up
    /// once per process, and every prober runs on the one loop thread.
    nonisolated(unsafe) private static var processTLS: TLS?

    /// TLS as this process set it up.
    package let tls: TLS

    package init(loop: EventLoop, tls: TLS = .available) throws(CurlError) {
        if HTTPProber.processTLS == nil {
            let code = uplinkd_global_init(tls == .available ? 1 : 0)
            guard code == CURLE_OK else { throw CurlError(easy: code, "curl_global_init") }
            HTTPProber.processTLS = tls
        }
        self.tls = HTTPProber.processTLS ?? tls
        guard let multi = curl_multi_init() else {
            throw CurlError(multi: CURLM_OUT_OF_MEMORY, "curl_multi_init")
        }
        self.loop = loop
        self.multi = multi
        let user = Unmanaged.passUnretained(self).toOpaque()
        var code = uplinkd_multi_set_socket_callback(multi, HTTPProber.socketTrampoline, user)
        if code == CURLM_OK {
            code = uplinkd_multi_set_timer_callback(multi, HTTPProber.timerTrampoline, user)
        }
        guard code == CURLM_OK else {
            curl_multi_cleanup(multi)
            throw CurlError(multi: code, "setting multi callbacks")
        }
    }

    deinit {
        for (easy, transfer) in transfers {
            curl_multi_remove_handle(multi, easy)
            transfer.release()
        }
        // Only after every easy handle using them is gone.
        for cache in pinCaches.values { curl_share_cleanup(cache.share) }
        for socket in watchedSockets { loop.unwatch(socket) }
        if let curlTimer { loop.cancel(curlTimer) }
        curl_multi_cleanup(multi)
    }

    /// Sends one probe; `completion` runs on the loop when it ends, whatever the
    /// outcome. A probe libcurl refuses to start is reported as a failed probe.
    package func send(_ request: ProbeRequest, settings: ProbeSettings, completion: @escaping (ProbeResult) -> Void) {
        do {
            try start(request, settings: settings, completion: completion)
        } catch {
            Log.error("cannot start probe \(request.probe.name) on \(request.interface): \(error)")
            let failed = ProbeResult(request: request, outcome: .failure(.other(code: error.code, message: error.message)),
                                     elapsedMilliseconds: 0, bytes: 0)
            // Delivered from the loop, like every other result.
            loop.schedule(afterMilliseconds: 0) { completion(failed) }
        }
    }

    private func start(_ request: ProbeRequest, settings: ProbeSettings,
                       completion: @escaping (ProbeResult) -> Void) throws(CurlError) {
        if tls == .notNeeded && request.probe.url.scheme == .https {
            throw CurlError(easy: CURLE_UNSUPPORTED_PROTOCOL, "https without TLS set up in this process")
        }
        guard let easy = curl_easy_init() else { throw CurlError(easy: CURLE_OUT_OF_MEMORY, "curl_easy_init") }
        let transfer = CurlTransfer(easy: easy, request: request, bodyLimitBytes: settings.bodyLimitBytes,
                                startNanoseconds: loop.time.monotonicNanoseconds, completion: completion)
        transfer.owner = self
        transfer.handshakeOnly = settings.handshakeOnly
        do {
            try configure(transfer, settings: settings)
            try pin(transfer)
        } catch {
            release(transfer)
            throw error
        }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            release(transfer)
            throw CurlError(multi: added, "adding probe \(request.probe.name)")
        }
        transfers[easy] = transfer
    }

    /// Pins the probe's host name to the addresses the uplink's own DNS gave
    /// (CURLOPT_RESOLVE), in a DNS cache private to this interface and family, so
    /// libcurl never asks the system resolver (which would go out the primary).
    private func pin(_ transfer: CurlTransfer) throws(CurlError) {
        let request = transfer.request
        guard !request.addresses.isEmpty else { return }
        let key = PinCacheKey(interface: request.interface, family: request.family)
        if pinCaches[key] == nil {
            guard let share = uplinkd_share_new_dns() else {
                throw CurlError(easy: CURLE_OUT_OF_MEMORY, "creating the DNS cache for \(key)")
            }
            pinCaches[key] = (share, 0)
        }
        pinCaches[key]!.users += 1
        transfer.pinCacheKey = key
        let share = pinCaches[key]!.share
        var code = uplinkd_easy_set_pointer(transfer.easy, CURLOPT_SHARE, share)
        guard code == CURLE_OK else { throw CurlError(easy: code, "setting the DNS cache") }
        let addresses = request.addresses.map { $0.family == .ipv6 ? "[\($0)]" : "\($0)" }.joined(separator: ",")
        let entry = "\(request.probe.url.host):\(request.probe.url.effectivePort):\(addresses)"
        transfer.resolve = curl_slist_append(nil, entry)
        // A NULL list would let libcurl fall back to the system resolver.
        guard transfer.resolve != nil else { throw CurlError(easy: CURLE_OUT_OF_MEMORY, "pinning \(entry)") }
        code = uplinkd_easy_set_slist(transfer.easy, CURLOPT_RESOLVE, transfer.resolve)
        guard code == CURLE_OK else { throw CurlError(easy: code, "pinning \(entry)") }
    }

    /// Frees a transfer's C resources, then its pin cache if no other transfer uses it.
    private func release(_ transfer: CurlTransfer) {
        transfer.release()
        guard let key = transfer.pinCacheKey, var cache = pinCaches[key] else { return }
        transfer.pinCacheKey = nil
        cache.users -= 1
        if cache.users > 0 {
            pinCaches[key] = cache
        } else {
            pinCaches[key] = nil
            curl_share_cleanup(cache.share)
        }
    }

    private func configure(_ transfer: CurlTransfer, settings: ProbeSettings) throws(CurlError) {
        let easy = transfer.easy
        let request = transfer.request
        func check(_ code: CURLcode, _ what: String) throws(CurlError) {
            guard code == CURLE_OK else { throw CurlError(easy: code, "setting \(what)") }
        }
        try check(uplinkd_easy_set_string(easy, CURLOPT_URL, request.probe.url.description), "URL")
        // "if!" makes libcurl use SO_BINDTODEVICE and fail rather than fall back to an
        // address bind, so a probe can never leave through another uplink.
        try check(uplinkd_easy_set_string(easy, CURLOPT_INTERFACE, "if!\(request.interface.value)"), "interface")
        let family = request.family == .ipv4 ? CURL_IPRESOLVE_V4 : CURL_IPRESOLVE_V6
        try check(uplinkd_easy_set_long(easy, CURLOPT_IPRESOLVE, Int(family)), "address family")
        try check(uplinkd_easy_set_long(easy, CURLOPT_FOLLOWLOCATION, 0), "no redirects")
        try check(uplinkd_easy_set_long(easy, CURLOPT_NOSIGNAL, 1), "no signals")
        try check(uplinkd_easy_set_long(easy, CURLOPT_TIMEOUT_MS, settings.timeoutMilliseconds), "timeout")
        try check(uplinkd_easy_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, settings.timeoutMilliseconds), "connect timeout")
        try check(uplinkd_easy_set_long(easy, CURLOPT_FRESH_CONNECT, 1), "fresh connection")
        try check(uplinkd_easy_set_long(easy, CURLOPT_FORBID_REUSE, 1), "no connection reuse")
        if settings.handshakeOnly {
            try check(uplinkd_easy_set_long(easy, CURLOPT_CONNECT_ONLY, 1), "connect only")
        }
        // An empty proxy disables http_proxy and friends from the environment: a probe
        // must see the uplink itself, not a proxy somewhere else.
        try check(uplinkd_easy_set_string(easy, CURLOPT_PROXY, ""), "no proxy")
        let protocols = settings.httpsOnly ? "https" : tls == .available ? "http,https" : "http"
        try check(uplinkd_easy_set_string(easy, CURLOPT_PROTOCOLS_STR, protocols), "protocols")
        try check(uplinkd_easy_set_string(easy, CURLOPT_USERAGENT, settings.userAgent), "user agent")
        try check(uplinkd_easy_set_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "error buffer")

        var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Cache-Control: no-cache")
        if let authorization = request.probe.authorization {
            headers = curl_slist_append(headers, "Authorization: \(authorization)")
        }
        if let accept = request.probe.accept {
            headers = curl_slist_append(headers, "Accept: \(accept)")
        }
        if let caFile = settings.caFilePath {
            try check(uplinkd_easy_set_string(easy, CURLOPT_CAINFO, caFile), "CA file")
        }
        transfer.headers = headers
        try check(uplinkd_easy_set_slist(easy, CURLOPT_HTTPHEADER, headers), "headers")
        try check(uplinkd_easy_set_write_callback(easy, HTTPProber.writeTrampoline,
                                                   Unmanaged.passUnretained(transfer).toOpaque()), "body callback")
        // The prober opens and closes the sockets, to read TCP_INFO before the close:
        // the bytes counted are the ones on the wire, retransmissions included.
        // The open callback gets the transfer (sockets open only while it runs); the
        // close callback gets the prober, which outlives every connection libcurl keeps.
        try check(uplinkd_easy_set_socket_callbacks(easy, HTTPProber.openSocketTrampoline,
                                                     Unmanaged.passUnretained(transfer).toOpaque(),
                                                     HTTPProber.closeSocketTrampoline,
                                                     Unmanaged.passUnretained(self).toOpaque()), "socket callbacks")
    }

    // MARK: libcurl callbacks (non-capturing; `self` comes back from the user pointer)

    private static let writeTrampoline: uplinkd_write_callback = { data, size, count, user in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(user!).takeUnretainedValue()
        return transfer.append(data, size * count)
    }

    private static let openSocketTrampoline: uplinkd_open_socket_callback = { user, _, address in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(user!).takeUnretainedValue()
        guard let address else { return CURL_SOCKET_BAD }
        let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(UPLINKD_SOCK_CLOEXEC),
                                address.pointee.protocol)
        guard descriptor >= 0 else { return CURL_SOCKET_BAD }
        if transfer.handshakeOnly {
            // The close sends a reset: no FIN exchange after a liveness handshake.
            var option = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        transfer.openSockets.insert(descriptor)
        transfer.owner?.socketOwners[descriptor] = transfer
        return descriptor
    }

    private static let closeSocketTrampoline: uplinkd_close_socket_callback = { user, descriptor in
        let prober = Unmanaged<HTTPProber>.fromOpaque(user!).takeUnretainedValue()
        // The transfer that opened it, if it still runs.
        prober.socketOwners.removeValue(forKey: descriptor)?.socketClosing(descriptor)
        return close(descriptor)
    }

    private static let socketTrampoline: uplinkd_socket_callback = { _, socket, what, user, _ in
        let prober = Unmanaged<HTTPProber>.fromOpaque(user!).takeUnretainedValue()
        prober.socketChanged(socket, what: what)
        return 0
    }

    private static let timerTrampoline: uplinkd_timer_callback = { _, timeoutMilliseconds, user in
        let prober = Unmanaged<HTTPProber>.fromOpaque(user!).takeUnretainedValue()
        prober.timerChanged(timeoutMilliseconds)
        return 0
    }

    private func socketChanged(_ socket: Int32, what: Int32) {
        var interest: EventLoop.Interest = []
        switch what {
        case Int32(CURL_POLL_IN): interest = .readable
        case Int32(CURL_POLL_OUT): interest = .writable
        case Int32(CURL_POLL_INOUT): interest = [.readable, .writable]
        default:
            watchedSockets.remove(socket)
            loop.unwatch(socket)
            return
        }
        do {
            try loop.watch(socket, for: interest) { [weak self] readiness in
                self?.socketReady(socket, readiness)
            }
            watchedSockets.insert(socket)
        } catch {
            // libcurl will time the transfer out; say why.
            Log.warning("cannot watch probe socket: \(error)")
        }
    }

    private func timerChanged(_ timeoutMilliseconds: Int) {
        if let curlTimer { loop.cancel(curlTimer) }
        curlTimer = nil
        guard timeoutMilliseconds >= 0 else { return }
        curlTimer = loop.schedule(afterMilliseconds: timeoutMilliseconds) { [weak self] in
            guard let self else { return }
            self.curlTimer = nil
            self.act(on: CURL_SOCKET_TIMEOUT, flags: 0)
        }
    }

    private func socketReady(_ socket: Int32, _ readiness: EventLoop.Readiness) {
        var flags: Int32 = 0
        if readiness.readable { flags |= Int32(CURL_CSELECT_IN) }
        if readiness.writable { flags |= Int32(CURL_CSELECT_OUT) }
        if readiness.failed { flags |= Int32(CURL_CSELECT_ERR) }
        act(on: socket, flags: flags)
    }

    private func act(on socket: Int32, flags: Int32) {
        var running: Int32 = 0
        let code = curl_multi_socket_action(multi, socket, flags, &running)
        if code != CURLM_OK {
            Log.warning("\(CurlError(multi: code, "curl_multi_socket_action"))")
        }
        collectFinished()
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            guard let transfer = transfers.removeValue(forKey: easy) else { continue }
            curl_multi_remove_handle(multi, easy)
            let result = transfer.result(code: code, nowNanoseconds: loop.time.monotonicNanoseconds)
            for descriptor in transfer.openSockets { socketOwners.removeValue(forKey: descriptor) }
            release(transfer)
            transfer.completion(result)
        }
    }
}
