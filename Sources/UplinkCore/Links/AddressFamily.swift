/// An IP address family, probed separately on uplinks that have both.
public enum AddressFamily: String, Sendable, CaseIterable {
    case ipv4
    case ipv6
}
