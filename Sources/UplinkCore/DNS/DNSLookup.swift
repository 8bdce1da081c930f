/// Why a name did not resolve through an uplink: the resolver's status (c-ares's,
/// mapped at the edge by the DNS adapter), with its code and the library's sentence.
public struct DNSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
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

    public let kind: Kind
    /// The ARES_* status, or errno for `bindFailed`; 0 when neither applies.
    public let code: Int
    public let message: String

    public var description: String { code == 0 ? message : "\(message) (code \(code))" }

    public init(kind: Kind, code: Int, message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }
}

/// A name resolved through an uplink: its addresses and how long the answer may be kept.
public struct DNSAnswer: Sendable, Equatable {
    public var addresses: [IPAddress]
    /// The smallest TTL of the answer's records, CNAMEs included.
    public var ttlSeconds: Int

    public init(addresses: [IPAddress], ttlSeconds: Int) {
        self.addresses = addresses
        self.ttlSeconds = ttlSeconds
    }
}

/// One lookup's outcome and what it cost on the wire (IP level, every query and
/// answer with its headers, retries included).
public struct DNSLookup: Sendable {
    public var result: Result<DNSAnswer, DNSFailure>
    public var bytes: Int

    public init(result: Result<DNSAnswer, DNSFailure>, bytes: Int) {
        self.result = result
        self.bytes = bytes
    }
}
