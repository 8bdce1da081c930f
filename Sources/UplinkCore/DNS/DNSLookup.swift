/// Why a name did not resolve through an uplink: the resolver's status (c-ares's,
/// mapped at the edge by the DNS adapter), with its code and the library's sentence.
package struct DNSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// The uplink has no DNS servers from any enabled source.
        case noServers
        /// NXDOMAIN.
        case notFound
        /// The name exists, with no record of the asked family.
        case noData
        case timeout
        /// SERVFAIL, REFUSED, a malformed answer, or no server reachable.
        case serverError
        /// A query socket could not be bound to the interface (SO_BINDTODEVICE).
        case bindFailed
        case other
    }

    package let kind: Kind
    /// The ARES_* status, or errno for `bindFailed`; 0 when neither applies.
    package let code: Int
    package let message: String

    package var description: String { code == 0 ? message : "\(message) (code \(code))" }

    package init(kind: Kind, code: Int, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }
}

/// A name resolved through an uplink: its addresses and how long the answer may be kept.
package struct DNSAnswer: Sendable, Equatable {
    package var addresses: [IPAddress]
    /// The smallest TTL of the answer's records, CNAMEs included.
    package var ttlSeconds: Int

    package init(addresses: [IPAddress], ttlSeconds: Int) {
        self.addresses = addresses
        self.ttlSeconds = ttlSeconds
    }
}

/// One lookup's outcome and what it cost on the wire (IP level, every query and
/// answer with its headers, retries included).
package struct DNSLookup: Sendable {
    package var result: Result<DNSAnswer, DNSFailure>
    package var bytes: Int

    package init(result: Result<DNSAnswer, DNSFailure>, bytes: Int) {
        self.result = result
        self.bytes = bytes
    }
}
