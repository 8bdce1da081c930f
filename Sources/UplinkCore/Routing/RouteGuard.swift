/// Notices when uplinkd's routing entries change behind its back and says when to run
/// the hooks again (a `repair` event) so the route-failover hook puts them back.
///
/// The hooks are the only ones meant to change the entries, so the picture taken when
/// they last caught up is the one to keep. A change seen while hooks run or wait is
/// theirs (the picture is taken again when they are done); a change seen while they are
/// idle is someone else's: another tool, `ip rule flush`, a network restart, or a DHCP
/// client giving the primary a new gateway. Pure: the agent feeds it pictures and the
/// time, and arms a timer for the delay it returns.
package struct RouteGuard: Sendable {
    /// A short wait gathers a burst (a network restart changes many entries at once).
    package static let firstDelayMilliseconds = 200
    /// Repairs closer together than this mean someone keeps undoing them: each next
    /// one waits twice as long, up to `longestDelayMilliseconds`.
    package static let quietMilliseconds = 10_000
    package static let longestDelayMilliseconds = 60_000

    /// The picture when the hooks last caught up; nil until then.
    package private(set) var applied: RoutingPicture?
    /// Start-up is over (every uplink had a verdict): entries found then with no hook
    /// event run yet are stale, left by an earlier run.
    package private(set) var armed = false
    private var lastRepairMilliseconds: Int?
    private var delayMilliseconds = RouteGuard.firstDelayMilliseconds

    package init() {}

    /// The hooks ran every queued event: what they left is the picture to keep.
    package mutating func hooksCaughtUp(_ picture: RoutingPicture) {
        applied = picture
    }

    /// Start-up is over; look at `picture` with `examine` next.
    package mutating func arm() {
        armed = true
    }

    /// Whether `picture`, seen with the hooks idle, needs a repair: nil, or the delay
    /// before it (look again then, and call `repairing` if it still does).
    package func examine(_ picture: RoutingPicture, hooksIdle: Bool) -> Int? {
        guard hooksIdle, armed else { return nil }
        if let applied {
            return picture == applied ? nil : delayMilliseconds
        }
        // Nothing ran since start: only leftovers of an earlier run need the hooks.
        return picture.hasNoEntries ? nil : delayMilliseconds
    }

    /// A repair event goes to the hooks now. Returns true when it follows the last one
    /// so closely that someone seems to keep undoing them (worth a warning).
    package mutating func repairing(now: Int) -> Bool {
        defer { lastRepairMilliseconds = now }
        guard let last = lastRepairMilliseconds, now - last < RouteGuard.quietMilliseconds + delayMilliseconds else {
            delayMilliseconds = RouteGuard.firstDelayMilliseconds
            return false
        }
        delayMilliseconds = min(delayMilliseconds * 2, RouteGuard.longestDelayMilliseconds)
        return true
    }
}
