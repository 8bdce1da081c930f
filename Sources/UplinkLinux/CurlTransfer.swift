import CCurl
import CCurlShim
import Glibc
import UplinkCore

/// One probe in flight: its easy handle, the body read so far, and who to tell. The
/// prober owns it; libcurl holds an unretained pointer to it as the write callback's
/// user data until its easy handle is removed from the multi handle.
final class Transfer {
    let easy: UnsafeMutableRawPointer
    let request: ProbeRequest
    let bodyLimitBytes: Int
    let completion: (ProbeResult) -> Void
    let startNanoseconds: UInt64
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    var headers: UnsafeMutablePointer<curl_slist>?
    /// The CURLOPT_RESOLVE list; libcurl reads it when the transfer starts.
    var resolve: UnsafeMutablePointer<curl_slist>?
    var pinCacheKey: String?
    var body: [UInt8] = []
    var truncated = false
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
        return ProbeResult(request: request, outcome: outcome(code: code), elapsedMilliseconds: elapsed,
                           bytes: bytesOnTheWire())
    }

    private func outcome(code: CURLcode) -> ProbeOutcome {
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

    private func bytesOnTheWire() -> Int {
        var headerBytes = 0
        var requestBytes = 0
        var bodyBytes: curl_off_t = 0
        _ = uplinkd_easy_get_long(easy, CURLINFO_HEADER_SIZE, &headerBytes)
        _ = uplinkd_easy_get_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
        _ = uplinkd_easy_get_offset(easy, CURLINFO_SIZE_DOWNLOAD_T, &bodyBytes)
        return headerBytes + requestBytes + Int(bodyBytes)
    }
}
