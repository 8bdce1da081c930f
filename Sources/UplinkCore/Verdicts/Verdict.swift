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

    /// Exit status of `uplinkd check` for one interface (uplinkd(8), EXIT STATUS).
    public var exitStatus: Int32 {
        switch self {
        case .online: return 0
        case .captive: return 1
        case .limited: return 2
        case .down, .unknown: return 3
        }
    }
}
