/// What an RFC 8908 captive-portal API says about the uplink's session
/// (`application/captive+json`), as uplinkd uses it.
public struct CaptivePortalStatus: Sendable, Equatable {
    /// Whether the client is held behind the portal now.
    public var captive: Bool
    /// Where a person logs in (https only, as RFC 8908 requires).
    public var userPortalURL: String?
    public var venueInfoURL: String?
    public var secondsRemaining: Int?
    public var bytesRemaining: Int?
    public var canExtendSession: Bool?

    public init(captive: Bool, userPortalURL: String? = nil, venueInfoURL: String? = nil, secondsRemaining: Int? = nil,
                bytesRemaining: Int? = nil, canExtendSession: Bool? = nil) {
        self.captive = captive
        self.userPortalURL = userPortalURL
        self.venueInfoURL = venueInfoURL
        self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining
        self.canExtendSession = canExtendSession
    }
}

/// One look at an uplink's captive-portal API: where it is, and what it said (nil
/// status: no usable answer, with `problem` saying why).
public struct CaptivePortalCheck: Sendable, Equatable {
    public var uri: ProbeURL
    public var status: CaptivePortalStatus?
    public var problem: String?
    public var bytes: Int

    public init(uri: ProbeURL, status: CaptivePortalStatus?, problem: String? = nil, bytes: Int = 0) {
        self.uri = uri
        self.status = status
        self.problem = problem
        self.bytes = bytes
    }

    public var json: JSONValue {
        .object([
            ("uri", .string(uri.description)),
            ("captive", status.map { .bool($0.captive) } ?? .null),
            ("user_portal_url", .optional(status?.userPortalURL)),
            ("venue_info_url", .optional(status?.venueInfoURL)),
            ("seconds_remaining", status?.secondsRemaining.map(JSONValue.int) ?? .null),
            ("bytes_remaining", status?.bytesRemaining.map(JSONValue.int) ?? .null),
            ("can_extend_session", status?.canExtendSession.map(JSONValue.bool) ?? .null),
            ("problem", .optional(problem)),
        ])
    }
}

/// Reads the captive-portal API (RFC 8908) and its URI from DHCP and RA (RFC 8910).
public enum CaptivePortalAPI {
    /// The media type the API answers with, and the Accept header asking for it.
    public static let mediaType = "application/captive+json"
    /// The API's JSON is a handful of members: more than this is not an API answer.
    public static let bodyLimitBytes = 16 * 1_024
    /// Ten years, and an exabyte: larger figures are left out.
    public static let maximumSessionSeconds = 315_360_000
    public static let maximumSessionBytes = 1 << 60

    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The status in an API answer's body. `captive` is required; a URL that is not
    /// https, or a negative count, is left out rather than trusted.
    public static func status(from body: [UInt8]) throws(Invalid) -> CaptivePortalStatus {
        let document: JSONValue
        do {
            document = try JSONReader.parse(body)
        } catch {
            throw Invalid(message: "the captive-portal API answered with \(error)")
        }
        guard case .object = document else { throw Invalid(message: "the captive-portal API answer is not a JSON object") }
        guard case .bool(let captive)? = document["captive"] else {
            throw Invalid(message: "the captive-portal API answer has no boolean \"captive\"")
        }
        func url(_ key: String) -> String? {
            guard case .string(let text)? = document[key], let parsed = try? ProbeURL(parsing: text),
                  parsed.scheme == .https else { return nil }
            return parsed.description
        }
        // Figures beyond these are no session a network keeps (and would overflow
        // the arithmetic of the re-check): left out like negative ones.
        func count(_ key: String, upTo limit: Int) -> Int? {
            guard case .int(let value)? = document[key], (0...limit).contains(value) else { return nil }
            return value
        }
        var canExtend: Bool?
        if case .bool(let value)? = document["can-extend-session"] { canExtend = value }
        return CaptivePortalStatus(captive: captive, userPortalURL: url("user-portal-url"), venueInfoURL: url("venue-info-url"),
                                   secondsRemaining: count("seconds-remaining", upTo: maximumSessionSeconds),
                                   bytesRemaining: count("bytes-remaining", upTo: maximumSessionBytes),
                                   canExtendSession: canExtend)
    }

    /// An API URI as DHCP or RA gave it: https only (RFC 8908 section 2), within
    /// ProbeURL's rules. `urn:ietf:params:capport:unrestricted` (no portal) gives nil.
    public static func uri(_ text: String) -> ProbeURL? {
        let trimmed = text.trimmingWhitespace.trimmingCharacters("\"")
        guard let url = try? ProbeURL(parsing: trimmed), url.scheme == .https else { return nil }
        return url
    }

    /// The URI in a dhclient lease (`option captive-portal "URI";` with the
    /// definition README gives: `option captive-portal code 114 = text;`; for DHCPv6,
    /// `option dhcp6.captive-portal code 103 = text;`), from the newest lease.
    public static func dhclientURI(_ text: String, interface: String) -> ProbeURL? {
        let leases = DhclientLeaseFile.lastLeases(text, interface: interface)
        if let value = DhclientLeaseFile.option("captive-portal", in: leases.dhcp4), let url = uri(value) { return url }
        if let value = DhclientLeaseFile.option("dhcp6.captive-portal", in: leases.dhcp6), let url = uri(value) { return url }
        return nil
    }

    /// systemd-networkd's link state or lease file: `CAPTIVE_PORTAL=URI`.
    public static func networkdURI(_ text: String) -> ProbeURL? {
        for line in text.split(separator: "\n") where line.hasPrefix("CAPTIVE_PORTAL=") {
            return uri(String(line.dropFirst("CAPTIVE_PORTAL=".count)))
        }
        return nil
    }
}

/// The session the captive-portal API told of, kept between rounds: when it ends,
/// what data it has left, and when to ask again before it runs out.
public struct CaptivePortalSession: Sendable, Equatable {
    /// Wall-clock seconds when the session ends, when the API gave seconds-remaining.
    public var endsWallSeconds: Int?
    public var bytesRemaining: Int?
    /// Monotonic time of the full round that asks the API again before the end.
    public var recheckMilliseconds: Int?

    public init(endsWallSeconds: Int? = nil, bytesRemaining: Int? = nil, recheckMilliseconds: Int? = nil) {
        self.endsWallSeconds = endsWallSeconds
        self.bytesRemaining = bytesRemaining
        self.recheckMilliseconds = recheckMilliseconds
    }

    /// Never sooner than this after the last look: a session at its very end (0 s
    /// left) must not turn into a full round every second.
    public static let shortestRecheckMilliseconds = 10_000

    /// From an API answer heard at `now`, for an open session (a held one has none):
    /// ask again a minute before the end, or after three quarters of a shorter
    /// session, so an extension (or the end) is seen in time.
    public init?(_ status: CaptivePortalStatus?, now: Instant) {
        guard let status, !status.captive, status.secondsRemaining != nil || status.bytesRemaining != nil else { return nil }
        bytesRemaining = status.bytesRemaining
        if let seconds = status.secondsRemaining {
            endsWallSeconds = now.wallSeconds + seconds
            let remaining = seconds * 1_000
            recheckMilliseconds = now.monotonicMilliseconds
                + max(CaptivePortalSession.shortestRecheckMilliseconds, max(remaining - 60_000, remaining * 3 / 4))
        }
    }

    /// Seconds left at `wallSeconds` (never negative).
    public func secondsRemaining(atWallSeconds wallSeconds: Int) -> Int? {
        endsWallSeconds.map { max(0, $0 - wallSeconds) }
    }
}
