/// A failure of one of the adapters, with the underlying typed error.
package enum AdapterError: Error, CustomStringConvertible {
    case system(SystemError)
    case curl(CurlError)
    case netlink(NetlinkError)

    package var description: String {
        switch self {
        case .system(let error): return "\(error)"
        case .curl(let error): return "\(error)"
        case .netlink(let error): return "\(error)"
        }
    }
}
