/// What uplinkd concluded about an uplink (or one address family of it).
///
/// The cases are ordered from worst to best so that "the best of its families"
/// is simply `max`.
public enum Verdict: String, Sendable, Comparable, CaseIterable {
    case unknown
    case down
    case limited
    case captive
    case online

    private var rank: Int {
        switch self {
        case .unknown: return 0
        case .down: return 1
        case .limited: return 2
        case .captive: return 3
        case .online: return 4
        }
    }

    public static func < (lhs: Verdict, rhs: Verdict) -> Bool { lhs.rank < rhs.rank }

    /// Exit status of `uplinkd check` for one interface (see README, "Exit status").
    public var exitStatus: Int32 {
        switch self {
        case .online: return 0
        case .captive: return 1
        case .limited: return 2
        case .down, .unknown: return 3
        }
    }
}

/// What sort of link an uplink is; used for display, priorities and metering.
public enum InterfaceKind: String, Sendable, CaseIterable {
    case ethernet
    case wifi
    case wwan
    case other
}

/// An IP address family, probed separately on uplinks that have both.
public enum AddressFamily: String, Sendable, CaseIterable {
    case ipv4
    case ipv6
}

/// A Linux network interface name that has passed the kernel's own validity rule
/// (`dev_valid_name`): 1 to 15 bytes, not "." or "..", no '/', ':' or whitespace.
///
/// Names arrive from the command line and configuration and end up in socket options
/// and environment variables, so they are checked once, here.
public struct InterfaceName: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public static let maximumBytes = 15

    public init?(_ candidate: String) {
        guard InterfaceName.problem(with: candidate) == nil else { return nil }
        value = candidate
    }

    /// Why `candidate` is not a valid interface name, or nil when it is.
    public static func problem(with candidate: String) -> String? {
        let bytes = Array(candidate.utf8)
        if bytes.isEmpty { return "an interface name cannot be empty" }
        if bytes.count > maximumBytes {
            return "interface name '\(candidate.printableEscaped)' is longer than \(maximumBytes) bytes"
        }
        if candidate == "." || candidate == ".." {
            return "'\(candidate)' is not an interface name"
        }
        for byte in bytes {
            // The kernel rejects '/', ':' and isspace(); we also refuse control bytes and
            // non-ASCII so a name is always safe to print and to put in an environment.
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: ":") || byte <= 0x20 || byte >= 0x7f {
                return "interface name '\(candidate.printableEscaped)' contains a character the kernel does not allow"
            }
        }
        return nil
    }

    public var description: String { value }
}

extension String {
    /// The string with control and non-ASCII characters escaped, for error messages
    /// that quote untrusted input.
    public var printableEscaped: String {
        var result = ""
        for scalar in unicodeScalars {
            if scalar.value >= 0x20 && scalar.value < 0x7f {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return result
    }
}
