/// An http or https URL that a probe may fetch, checked strictly at configuration time.
///
/// libcurl parses the URL again; this check exists so a bad URL is reported with the
/// configuration file, line and key, and never reaches the network.
package struct ProbeURL: Hashable, Sendable, CustomStringConvertible {
    package enum Scheme: String, Sendable { case http, https }

    package let scheme: Scheme
    /// Host name, IPv4 literal, or IPv6 literal without brackets.
    package let host: String
    package let port: Int?
    /// Path and query, starting with "/".
    package let pathAndQuery: String

    package var isIPv6Literal: Bool { host.contains(":") }

    package var description: String {
        let hostPart = isIPv6Literal ? "[\(host)]" : host
        let portPart = port.map { ":\($0)" } ?? ""
        return "\(scheme.rawValue)://\(hostPart)\(portPart)\(pathAndQuery)"
    }

    package var effectivePort: Int { port ?? (scheme == .http ? 80 : 443) }

    package init(parsing text: String) throws(ProbeURLError) {
        for scalar in text.unicodeScalars where scalar.value <= 0x20 || scalar.value >= 0x7f {
            throw ProbeURLError("contains a space, control or non-ASCII character")
        }
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("http://") {
            scheme = .http
            rest = text.dropFirst(7)
        } else if lowered.hasPrefix("https://") {
            scheme = .https
            rest = text.dropFirst(8)
        } else {
            throw ProbeURLError("must start with http:// or https://")
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        var tail = String(rest[authorityEnd...])
        if let hash = tail.firstIndex(of: "#") {
            tail = String(tail[tail.startIndex..<hash])
        }
        if tail.isEmpty || tail.first == "?" { tail = "/" + tail }
        pathAndQuery = tail

        if authority.contains("@") {
            throw ProbeURLError("must not carry credentials (user@host); use the authorization key")
        }
        if authority.isEmpty { throw ProbeURLError("has no host") }

        let (hostText, port) = try ProbeURL.hostAndPort(of: authority)
        self.port = port
        host = hostText.lowercased()
    }

    /// The host and port of an authority (`host`, `host:port`, `[v6]`, `[v6]:port`).
    private static func hostAndPort(of authority: Substring) throws(ProbeURLError) -> (host: String, port: Int?) {
        var hostPart: Substring
        var portPart: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else {
                throw ProbeURLError("has an unterminated IPv6 literal")
            }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw ProbeURLError("has garbage after the IPv6 literal") }
                portPart = after.dropFirst()
            }
            guard IPAddress.parseIPv6(String(hostPart)) != nil else {
                throw ProbeURLError("has an invalid IPv6 literal '\(hostPart)'")
            }
        } else if let colon = authority.firstIndex(of: ":") {
            hostPart = authority[authority.startIndex..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
        }
        var port: Int?
        if let portText = portPart {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw ProbeURLError("has an invalid port '\(portText)'")
            }
            port = value
        }
        let hostText = String(hostPart)
        try checkHost(hostText)
        return (hostText, port)
    }

    /// A host name must be valid, a numeric one a four-part IPv4 address, and a literal
    /// one host that could answer.
    private static func checkHost(_ hostText: String) throws(ProbeURLError) {
        if !hostText.contains(":") {
            guard HostName.isValid(hostText) else {
                throw ProbeURLError("has an invalid host name '\(hostText)'")
            }
            // No top-level domain is numeric: a host ending in a number is meant as an
            // IPv4 address, and only the four-part decimal form is taken as one (what
            // `0`, `127.1` or `0x7f.1` mean differs between resolvers and libraries).
            let last = hostText.split(separator: ".").last.map(String.init) ?? hostText
            let numeric = !last.isEmpty && (last.allSatisfy(\.isNumber)
                || (last.lowercased().hasPrefix("0x") && last.dropFirst(2).allSatisfy(\.isHexDigit)))
            if numeric && IPAddress(hostText) == nil {
                throw ProbeURLError("has host '\(hostText)', which is not an IPv4 address: write one as four decimal numbers from 0 to 255")
            }
        }
        if let literal = IPAddress(hostText), literal.notOneHost != nil {
            throw ProbeURLError("has host '\(hostText)', which is not one host that could answer")
        }
    }

    /// Resolves a Location header value against this URL (absolute, scheme-relative,
    /// absolute-path and relative forms), for reporting a portal URL.
    package func resolving(_ reference: String) -> String {
        let trimmed = reference.trimmingWhitespace
        let lowered = trimmed.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return trimmed }
        let hostPart = isIPv6Literal ? "[\(host)]" : host
        let origin = "\(scheme.rawValue)://\(hostPart)" + (port.map { ":\($0)" } ?? "")
        if trimmed.hasPrefix("//") { return "\(scheme.rawValue):\(trimmed)" }
        if trimmed.hasPrefix("/") { return origin + trimmed }
        var directory = pathAndQuery
        if let query = directory.firstIndex(of: "?") { directory = String(directory[..<query]) }
        if let slash = directory.lastIndex(of: "/") { directory = String(directory[...slash]) }
        return origin + directory + trimmed
    }
}

/// Why a probe URL was refused.
package struct ProbeURLError: Error, Sendable, CustomStringConvertible {
    package let message: String
    init(_ message: String) { self.message = message }
    package var description: String { message }
}
