import CAres

/// Why a name did not resolve through an uplink: the c-ares status, mapped here at
/// the edge, with its code and c-ares's sentence.
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

    static func status(_ status: Int32) -> DNSFailure {
        let kind: Kind
        switch status {
        case ARES_ENOTFOUND: kind = .notFound
        case ARES_ENODATA: kind = .noData
        case ARES_ETIMEOUT: kind = .timeout
        case ARES_ESERVFAIL, ARES_EREFUSED, ARES_EBADRESP, ARES_ECONNREFUSED, ARES_EFORMERR: kind = .serverError
        default: kind = .other
        }
        return DNSFailure(kind: kind, code: Int(status), message: String(cString: ares_strerror(status)))
    }
}
