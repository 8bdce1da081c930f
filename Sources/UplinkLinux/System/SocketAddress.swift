import Glibc
import UplinkCore

/// IP addresses and ports as the socket calls take and give them (`sockaddr_in`,
/// `sockaddr_in6`), filled and read in one place.
package enum SocketAddress {
    /// Calls `body` with `address`:`port` as a socket address and its length.
    package static func with<Result>(_ address: IPAddress, port: Int,
                                     _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch address.family {
        case .ipv4:
            var raw = sockaddr_in()
            raw.sin_family = sa_family_t(AF_INET)
            raw.sin_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &raw.sin_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .ipv6:
            var raw = sockaddr_in6()
            raw.sin6_family = sa_family_t(AF_INET6)
            raw.sin6_port = in_port_t(UInt16(port).bigEndian)
            withUnsafeMutableBytes(of: &raw.sin6_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// The port of a socket's local (`peer` false) or remote end; nil when it has none
    /// or is not IP.
    package static func port(of descriptor: Int32, peer: Bool) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            return nil
        }
    }
}
