import CAres
import CAresShim
import UplinkCore

extension DNSFailure {
    /// A c-ares status as a failure, mapped here at the edge.
    static func status(_ status: Int32) -> DNSFailure {
        let kind: Kind
        switch status {
        case uplinkd_ares_enotfound: kind = .notFound
        case uplinkd_ares_enodata: kind = .noData
        case uplinkd_ares_etimeout: kind = .timeout
        case uplinkd_ares_eservfail, uplinkd_ares_erefused, uplinkd_ares_ebadresp, uplinkd_ares_econnrefused,
             uplinkd_ares_eformerr: kind = .serverError
        default: kind = .other
        }
        return DNSFailure(kind: kind, code: Int(status), message: String(cString: ares_strerror(status)))
    }
}
