/// What an RFC 8908 captive-portal API says about the uplink's session
/// (`application/captive+json`), as uplinkd uses it.
package struct CaptivePortalStatus: Sendable, Equatable {
    /// Whether the client is held behind the portal now.
    package var captive: Bool
    /// Where a person logs in (https only, as RFC 8908 requires).
    package var userPortalURL: String?
    package var venueInfoURL: String?
    package var secondsRemaining: Int?
    package var bytesRemaining: Int?
    package var canExtendSession: Bool?
    /// The members of the answer left out rather than trusted, each named with why
    /// (`user-portal-url http://... refused: not https`), in the order read.
    package var refused: [String]

    package init(captive: Bool, userPortalURL: String? = nil, venueInfoURL: String? = nil, secondsRemaining: Int? = nil,
                bytesRemaining: Int? = nil, canExtendSession: Bool? = nil, refused: [String] = []) {
        self.captive = captive
        self.userPortalURL = userPortalURL
        self.venueInfoURL = venueInfoURL
        self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining
        self.canExtendSession = canExtendSession
        self.refused = refused
    }
}

/// One look at an uplink's captive-portal API: where it is, and what it said (nil
/// status: no usable answer, with `problem` saying why; a usable answer with members
/// left out has them named in `problem`).
package struct CaptivePortalCheck: Sendable, Equatable {
    package var uri: ProbeURL
    package var status: CaptivePortalStatus?
    package var problem: String?
    package var bytes: Int

    package init(uri: ProbeURL, status: CaptivePortalStatus?, problem: String? = nil, bytes: Int = 0) {
        self.uri = uri
        self.status = status
        self.problem = problem ?? status.flatMap { $0.refused.isEmpty ? nil : $0.refused.joined(separator: "; ") }
        self.bytes = bytes
    }

    package var json: JSONValue {
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
package enum CaptivePortalAPI {
    /// The media type the API answers with, and the Accept header asking for it.
    package static let mediaType = "application/captive+json"
    /// The API's JSON is a handful of members: more than this is not an API answer.
    package static let bodyLimitBytes = 16 * 1_024
    /// Ten years, and an exabyte: larger figures are left out.
    package static let maximumSessionSeconds = 315_360_000
    package static let maximumSessionBytes = 1 << 60

    package struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// The status in an API answer's body. `captive` is required; a URL that is not
    /// https, or a count out of range, is left out rather than trusted, and named in
    /// `refused`.
    package static func status(from body: [UInt8]) throws(Invalid) -> CaptivePortalStatus {
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
        var refused: [String] = []
        // The network controls this text: what is quoted back is made safe first.
        func url(_ key: String) -> String? {
            guard let value = document[key] else { return nil }
            guard case .string(let text) = value else {
                refused.append("\(key) refused: not a string")
                return nil
            }
            guard let parsed = try? ProbeURL(parsing: text) else {
                refused.append("\(key) \(PortalHints.safeURL(text)) refused: not a URL")
                return nil
            }
            guard parsed.scheme == .https else {
                refused.append("\(key) \(PortalHints.safeURL(parsed.description)) refused: not https (RFC 8908)")
                return nil
            }
            return parsed.description
        }
        // Figures beyond these are no session a network keeps (and would overflow
        // the arithmetic of the re-check): left out like negative ones.
        func count(_ key: String, upTo limit: Int) -> Int? {
            guard let value = document[key] else { return nil }
            guard case .int(let figure) = value, (0...limit).contains(figure) else {
                refused.append("\(key) refused: not a count from 0 to \(limit)")
                return nil
            }
            return figure
        }
        var canExtend: Bool?
        if case .bool(let value)? = document["can-extend-session"] { canExtend = value }
        let userPortalURL = url("user-portal-url"), venueInfoURL = url("venue-info-url")
        let seconds = count("seconds-remaining", upTo: maximumSessionSeconds)
        let bytes = count("bytes-remaining", upTo: maximumSessionBytes)
        return CaptivePortalStatus(captive: captive, userPortalURL: userPortalURL, venueInfoURL: venueInfoURL,
                                   secondsRemaining: seconds, bytesRemaining: bytes, canExtendSession: canExtend,
                                   refused: refused)
    }

    /// An API URI as DHCP or RA gave it: https only (RFC 8908 section 2), within
    /// ProbeURL's rules. `urn:ietf:params:capport:unrestricted` (no portal) gives nil.
    package static func uri(_ text: String) -> ProbeURL? {
        let trimmed = text.trimmingWhitespace.trimmingCharacters("\"")
        guard let url = try? ProbeURL(parsing: trimmed), url.scheme == .https else { return nil }
        return url
    }

    /// The URI in a dhclient lease (`option captive-portal "URI";` with the
    /// definition uplinkd(8) gives: `option captive-portal code 114 = text;`; for DHCPv6,
    /// `option dhcp6.captive-portal code 103 = text;`), from the newest lease.
    package static func dhclientURI(_ text: String, interface: String) -> ProbeURL? {
        let leases = DhclientLeaseFile.lastLeases(text, interface: interface)
        if let value = DhclientLeaseFile.option("captive-portal", in: leases.dhcp4), let url = uri(value) { return url }
        if let value = DhclientLeaseFile.option("dhcp6.captive-portal", in: leases.dhcp6), let url = uri(value) { return url }
        return nil
    }

    /// systemd-networkd's link state or lease file: `CAPTIVE_PORTAL=URI`.
    package static func networkdURI(_ text: String) -> ProbeURL? {
        for line in text.split(separator: "\n") where line.hasPrefix("CAPTIVE_PORTAL=") {
            return uri(String(line.dropFirst("CAPTIVE_PORTAL=".count)))
        }
        return nil
    }
}

/// The session the captive-portal API told of, kept between rounds: when it ends,
/// what data it has left, and when to ask again before it runs out.
package struct CaptivePortalSession: Sendable, Equatable {
    /// Wall-clock seconds when the session ends, when the API gave seconds-remaining.
    package var endsWallSeconds: Int?
    package var bytesRemaining: Int?
    /// Monotonic time of the full round that asks the API again before the end.
    package var recheckMilliseconds: Int?

    package init(endsWallSeconds: Int? = nil, bytesRemaining: Int? = nil, recheckMilliseconds: Int? = nil) {
        self.endsWallSeconds = endsWallSeconds
        self.bytesRemaining = bytesRemaining
        self.recheckMilliseconds = recheckMilliseconds
    }

    /// Never sooner than this after the last look: a session at its very end (0 s
    /// left) must not turn into a full round every second.
    package static let shortestRecheckMilliseconds = 10_000

    /// From an API answer heard at `now`, for an open session (a held one has none):
    /// ask again a minute before the end, or after three quarters of a shorter
    /// session, so an extension (or the end) is seen in time.
    package init?(_ status: CaptivePortalStatus?, now: Instant) {
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
    package func secondsRemaining(atWallSeconds wallSeconds: Int) -> Int? {
        endsWallSeconds.map { max(0, $0 - wallSeconds) }
    }
}
