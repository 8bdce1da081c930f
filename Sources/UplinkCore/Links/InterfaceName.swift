/// A Linux network interface name that has passed the kernel's own validity rule
/// (`dev_valid_name`): 1 to 15 bytes, not "." or "..", no '/', ':' or whitespace.
///
/// Names arrive from the command line, the configuration, the kernel and the state
/// file, and end up in socket options and environment variables, so they are checked
/// once, here, and stay typed from then on.
public struct InterfaceName: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: String

    package static let maximumBytes = 15

    public init?(_ candidate: String) {
        guard InterfaceName.problem(with: candidate) == nil else { return nil }
        value = candidate
    }

    /// Why `candidate` is not a valid interface name, or nil when it is.
    package static func problem(with candidate: String) -> String? {
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

    public static func < (lhs: InterfaceName, rhs: InterfaceName) -> Bool { lhs.value < rhs.value }
}
