import CAres
import UplinkCore

extension DNSFailure {
    /// A c-ares status as a failure, mapped here at the edge.
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
