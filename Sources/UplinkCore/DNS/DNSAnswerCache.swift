/// Probe host names resolved through one uplink, kept within their TTL (bounded below
/// and above) so steady light rounds cost one HTTP exchange and no DNS. Only answers
/// that led to a validated probe are kept; full rounds, failures and link events
/// resolve again, so portal and hijack detection see fresh answers. A liveness round
/// (a bare handshake, no verdict) may use an answer past its TTL: a handshake to the
/// address last known tests the path as well, and when it fails, the full round that
/// follows resolves again. On a metered primary checked every 90 s that saves a DNS
/// exchange (about 150 bytes, 4 MB a month) per check.
package struct DNSAnswerCache: Sendable, Equatable {
    package struct Key: Hashable, Sendable {
        package var host: String
        package var family: AddressFamily

        package init(host: String, family: AddressFamily) {
            self.host = host
            self.family = family
        }
    }

    private struct Entry: Sendable, Equatable {
        var addresses: [IPAddress]
        var expiresMilliseconds: Int
    }

    private var entries: [Key: Entry] = [:]

    package init() {}

    /// Keeps an answer for its TTL, clamped to `bounds` (milliseconds).
    package mutating func store(_ addresses: [IPAddress], for key: Key, ttlSeconds: Int, at now: Int,
                               bounds: ClosedRange<Int>) {
        guard !addresses.isEmpty else { return }
        let lifetime = min(bounds.upperBound, max(bounds.lowerBound, max(0, ttlSeconds) * 1_000))
        entries[key] = Entry(addresses: addresses, expiresMilliseconds: now + lifetime)
    }

    /// The answers still valid at `now`.
    package func answers(at now: Int) -> [Key: [IPAddress]] {
        entries.filter { $0.value.expiresMilliseconds > now }.mapValues(\.addresses)
    }

    /// Every answer kept, within its TTL or not (for liveness rounds only).
    package func lastKnown() -> [Key: [IPAddress]] {
        entries.mapValues(\.addresses)
    }

    package mutating func clear() {
        entries = [:]
    }
}
