import CCurl
import CCurlShim
import CLinuxShim
import Glibc
import UplinkCore

/// One probe in flight: its easy handle, the body read so far, what its sockets
/// carried, and who to tell. The prober owns it; libcurl holds an unretained pointer to
/// it as the write and open-socket callbacks' user data until its easy handle is
/// removed from the multi handle (sockets are opened only while it runs).
final class CurlTransfer {
    let easy: UnsafeMutableRawPointer
    let request: ProbeRequest
    let bodyLimitBytes: Int
    let completion: (ProbeResult) -> Void
    let startNanoseconds: UInt64
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    var headers: UnsafeMutablePointer<curl_slist>?
    /// The CURLOPT_RESOLVE list; libcurl reads it when the transfer starts.
    var resolve: UnsafeMutablePointer<curl_slist>?
    var pinCacheKey: PinCacheKey?
    /// The prober that runs it (weak: the prober owns its transfers).
    weak var owner: HTTPProber?
    var body: [UInt8] = []
    var truncated = false
    /// Sockets opened for this transfer and not yet closed through the prober.
    var openSockets: Set<Int32> = []
    /// What the closed sockets carried at the IP level (TCP_INFO), and how many had
    /// a connection to close.
    var measuredBytes = 0
    var measuredSockets = 0
    var unmeasuredSockets = 0
    var closedConnections = 0
    var headerBytes = 52
    /// A liveness check: connect, then close with a reset; no HTTP.
    var handshakeOnly = false
    private var released = false

    init(easy: UnsafeMutableRawPointer, request: ProbeRequest, bodyLimitBytes: Int, startNanoseconds: UInt64,
         completion: @escaping (ProbeResult) -> Void) {
        self.easy = easy
        self.startNanoseconds = startNanoseconds
        self.request = request
        self.bodyLimitBytes = bodyLimitBytes
        self.completion = completion
        errorBuffer.initialize(to: 0)
    }

    deinit { errorBuffer.deallocate() }

    /// Frees the C resources; the object itself may live on for the completion.
    func release() {
        guard !released else { return }
        released = true
        curl_easy_cleanup(easy)
        curl_slist_free_all(headers)
        curl_slist_free_all(resolve)
        headers = nil
        resolve = nil
    }

    /// Keeps at most `bodyLimitBytes`; returning less than offered makes libcurl abort
    /// the transfer with CURLE_WRITE_ERROR, which is how the read stays bounded.
    func append(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let data, count > 0 else { return count }
        let room = bodyLimitBytes - body.count
        let taken = min(room, count)
        data.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: taken))
        }
        if taken < count { truncated = true }
        return taken
    }

    func result(code: CURLcode, nowNanoseconds: UInt64) -> ProbeResult {
        let elapsed = Int((nowNanoseconds - startNanoseconds) / 1_000_000)
        if handshakeOnly && code == CURLE_OK { measureHandshakes() }
        var result = ProbeResult(request: request, outcome: outcome(code: code), elapsedMilliseconds: elapsed,
                                 bytes: bytesOnTheWire(elapsedMilliseconds: elapsed))
        if code != CURLE_OK && !(code == CURLE_WRITE_ERROR && truncated) {
            // libcurl's own sentence is what tells "limited (error)" apart; it may
            // quote the network, so control bytes are replaced.
            Log.info("\(request.interface) \(request.family.rawValue) probe \(request.probe.name): curl error \(code.rawValue): \(detail(code).printableForLog)")
        }
        // libcurl reports 0 when no connection was made.
        var connectMicroseconds: curl_off_t = 0
        _ = uplinkd_easy_get_offset(easy, CURLINFO_CONNECT_TIME_T, &connectMicroseconds)
        result.connected = connectMicroseconds > 0
        if result.connected { result.connectMilliseconds = Int(connectMicroseconds / 1_000) }
        return result
    }

    /// A socket of this transfer is about to close: what it carried, from TCP_INFO.
    func socketClosing(_ descriptor: Int32) {
        openSockets.remove(descriptor)
        var totals = uplinkd_tcp_totals()
        guard uplinkd_tcp_totals(descriptor, &totals) == 0 else {
            unmeasuredSockets += 1
            return
        }
        measuredSockets += 1
        measuredBytes += Int(totals.ip_bytes_sent + totals.ip_bytes_received)
        headerBytes = Int(totals.header_bytes)
        if handshakeOnly {
            // Closed with a reset (SO_LINGER 0): one segment with the connection's
            // headers (timestamps included), no FIN exchange.
            measuredBytes += Int(totals.header_bytes)
        } else if totals.segments_received > 0 {
            closedConnections += 1
        }
    }


    /// A liveness check's connection is still open when it ends (libcurl keeps it
    /// for the caller): what it carried so far, plus the reset its close sends.
    private func measureHandshakes() {
        for descriptor in openSockets {
            var totals = uplinkd_tcp_totals()
            guard uplinkd_tcp_totals(descriptor, &totals) == 0 else { continue }
            measuredSockets += 1
            measuredBytes += Int(totals.ip_bytes_sent + totals.ip_bytes_received) + Int(totals.header_bytes)
            openSockets.remove(descriptor)
        }
    }

    private func outcome(code: CURLcode) -> ProbeOutcome {
        if handshakeOnly && code == CURLE_OK { return .handshake }
        if code == CURLE_OK || (code == CURLE_WRITE_ERROR && truncated) {
            var status = 0
            _ = uplinkd_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            if status > 0 {
                var location: UnsafeMutablePointer<CChar>?
                _ = uplinkd_easy_get_string(easy, CURLINFO_REDIRECT_URL, &location)
                return .response(ProbeResponse(status: status, location: location.map { String(cString: $0) },
                                               body: body, bodyTruncated: truncated))
            }
        }
        return .failure(failure(code: code))
    }

    /// libcurl codes (and the socket errno behind a failed connect) turned into the
    /// few failures a verdict cares about, right here at the edge.
    private func failure(code: CURLcode) -> TransportFailure {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .dnsFailed
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_COULDNT_CONNECT:
            var osErrno = 0
            _ = uplinkd_easy_get_long(easy, CURLINFO_OS_ERRNO, &osErrno)
            switch Int32(osErrno) {
            case ECONNREFUSED: return .refused
            case ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL: return .unreachable
            case ETIMEDOUT: return .timeout
            default: return .other(code: Int(code.rawValue), message: detail(code))
            }
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS:
            return .tls
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return .reset
        case CURLE_INTERFACE_FAILED:
            return .bindFailed
        default:
            return .other(code: Int(code.rawValue), message: detail(code))
        }
    }

    private func detail(_ code: CURLcode) -> String {
        let buffered = String(cString: errorBuffer)
        return buffered.isEmpty ? String(cString: curl_easy_strerror(code)) : buffered
    }

    /// IP-level bytes: what TCP_INFO counted on each socket before it closed, plus
    /// what follows a close (our FIN and last ACK, the peer's FIN), plus the SYNs of
    /// sockets libcurl closed without asking (7.88 does so after a connect timeout),
    /// sent at 0, 1, 3, 7 s... of the elapsed time. Without TCP_INFO (kernels before
    /// 4.19), the HTTP bytes libcurl reports plus typical TCP/IP overhead.
    private func bytesOnTheWire(elapsedMilliseconds elapsed: Int) -> Int {
        var bytes = measuredBytes + closedConnections * 3 * headerBytes
        let synBytes = (request.family == .ipv4 ? 20 : 40) + 40
        var synCount = 1
        while synCount < 8 && ((1 << synCount) - 1) * 1_000 < elapsed { synCount += 1 }
        bytes += (openSockets.count) * synCount * synBytes
        if measuredSockets == 0 && unmeasuredSockets > 0 {
            var headerSize = 0
            var requestSize = 0
            var bodySize: curl_off_t = 0
            _ = uplinkd_easy_get_long(easy, CURLINFO_HEADER_SIZE, &headerSize)
            _ = uplinkd_easy_get_long(easy, CURLINFO_REQUEST_SIZE, &requestSize)
            _ = uplinkd_easy_get_offset(easy, CURLINFO_SIZE_DOWNLOAD_T, &bodySize)
            // Handshake, request, response and teardown: about ten segments.
            bytes += headerSize + requestSize + Int(bodySize) + 10 * (synBytes - 8)
        }
        return bytes
    }
}

/// One private DNS cache of pinned answers per interface and family.
struct PinCacheKey: Hashable, CustomStringConvertible {
    var interface: InterfaceName
    var family: AddressFamily

    var description: String { "\(interface) \(family.rawValue)" }
}
