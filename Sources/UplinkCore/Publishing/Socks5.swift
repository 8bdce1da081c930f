/// The few messages of SOCKS5 (RFC 1928) the agent's relay speaks with libmosquitto,
/// which sends its MQTT connection through it so the connection leaves by the current
/// primary (`OwnTrafficRoute`): the greeting (no authentication is the only method
/// accepted), one CONNECT request, one reply. Pure, bounded and strict: a peer that
/// sends anything else is refused with a sentence, never trusted.
package enum Socks5 {
    package static let version: UInt8 = 5
    /// Longest greeting and request (255 methods; a 255-byte name and its framing).
    package static let maximumGreetingBytes = 2 + 255
    package static let maximumRequestBytes = 4 + 1 + 255 + 2

    /// Where a CONNECT request asks to go.
    package struct Target: Sendable, Equatable, CustomStringConvertible {
        package enum Host: Sendable, Equatable {
            case address(IPAddress)
            case name(String)
        }

        package var host: Host
        package var port: Int

        package init(host: Host, port: Int) {
            self.host = host
            self.port = port
        }

        package var description: String {
            switch host {
            case .address(let address): return address.family == .ipv6 ? "[\(address)]:\(port)" : "\(address):\(port)"
            case .name(let name): return "\(name):\(port)"
            }
        }
    }

    /// What reading a message from the bytes received so far gives.
    package enum Parse<Value: Sendable & Equatable>: Sendable, Equatable {
        /// Not all of it has arrived.
        case incomplete
        /// The message and how many bytes it took.
        case complete(Value, bytes: Int)
        case invalid(String)
    }

    /// The client's greeting: version 5 and a list of methods that must include "no
    /// authentication" (0).
    package static func greeting(_ bytes: ArraySlice<UInt8>) -> Parse<Bool> {
        guard let first = bytes.first else { return .incomplete }
        guard first == version else { return .invalid("not SOCKS5 (version byte \(first))") }
        guard bytes.count >= 2 else { return .incomplete }
        let count = Int(bytes[bytes.startIndex + 1])
        guard count > 0 else { return .invalid("a greeting that offers no method") }
        guard bytes.count >= 2 + count else { return .incomplete }
        let methods = bytes[(bytes.startIndex + 2)..<(bytes.startIndex + 2 + count)]
        guard methods.contains(0) else { return .invalid("a greeting without the no-authentication method") }
        return .complete(true, bytes: 2 + count)
    }

    /// The answer to an acceptable greeting: no authentication.
    package static let methodChosen: [UInt8] = [version, 0]

    /// A CONNECT request to an IPv4 or IPv6 address or a host name.
    package static func request(_ bytes: ArraySlice<UInt8>) -> Parse<Target> {
        let start = bytes.startIndex
        guard bytes.count >= 4 else { return bytes.first.map { $0 == version ? .incomplete : .invalid("not SOCKS5") } ?? .incomplete }
        guard bytes[start] == version else { return .invalid("not SOCKS5 (version byte \(bytes[start]))") }
        guard bytes[start + 1] == 1 else { return .invalid("command \(bytes[start + 1]) (only CONNECT, 1, is relayed)") }
        guard bytes[start + 2] == 0 else { return .invalid("a reserved byte that is not 0") }
        let addressStart = start + 4
        let host: Target.Host
        let addressLength: Int
        switch bytes[start + 3] {
        case 1, 4:
            let family: AddressFamily = bytes[start + 3] == 1 ? .ipv4 : .ipv6
            addressLength = family == .ipv4 ? 4 : 16
            guard bytes.count >= 4 + addressLength + 2 else { return .incomplete }
            guard let address = IPAddress(family: family, bytes: Array(bytes[addressStart..<(addressStart + addressLength)])) else {
                return .invalid("an address that is not one")
            }
            host = .address(address)
        case 3:
            guard bytes.count >= 5 else { return .incomplete }
            let length = Int(bytes[addressStart])
            addressLength = 1 + length
            guard bytes.count >= 4 + addressLength + 2 else { return .incomplete }
            let name = String(decoding: bytes[(addressStart + 1)..<(addressStart + 1 + length)], as: UTF8.self)
            guard HostName.isValid(name) else { return .invalid("a host name that is not one (\(name.printableEscaped))") }
            host = .name(name)
        case let other:
            return .invalid("address type \(other)")
        }
        let portStart = addressStart + addressLength
        let port = Int(bytes[portStart]) << 8 | Int(bytes[portStart + 1])
        guard port > 0 else { return .invalid("port 0") }
        return .complete(Target(host: host, port: port), bytes: 4 + addressLength + 2)
    }

    /// The reply to a request: whether the relay reached the target.
    package enum Outcome: UInt8, Sendable {
        case succeeded = 0
        case generalFailure = 1
        case networkUnreachable = 3
        case hostUnreachable = 4
        case connectionRefused = 5
    }

    /// The reply, with an unspecified bound address (libmosquitto reads and ignores it).
    package static func reply(_ outcome: Outcome) -> [UInt8] {
        [version, outcome.rawValue, 0, 1, 0, 0, 0, 0, 0, 0]
    }
}
