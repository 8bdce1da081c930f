/// A moment as the journal keeps it: the wall clock for people, the monotonic clock
/// and the boot it belongs to for durations that a clock jump cannot bend, and
/// whether the wall clock was synchronised then (a gateway without a real-time clock
/// boots at 1970 or at its last saved time, and jumps at the first NTP sync).
package struct JournalTime: Sendable, Equatable {
    package var wallSeconds: Int
    package var monotonicMilliseconds: Int
    package var bootID: String
    package var synced: Bool

    package init(wallSeconds: Int, monotonicMilliseconds: Int, bootID: String, synced: Bool) {
        self.wallSeconds = wallSeconds
        self.monotonicMilliseconds = monotonicMilliseconds
        self.bootID = bootID
        self.synced = synced
    }

    /// Milliseconds from `self` to `later`: by the monotonic clock within one boot, by
    /// the wall clocks across boots (never negative).
    package func milliseconds(to later: JournalTime) -> Int {
        if bootID == later.bootID { return max(0, later.monotonicMilliseconds - monotonicMilliseconds) }
        return max(0, (later.wallSeconds - wallSeconds) * 1000)
    }
}

/// One uplink's reason while a period lasted (`eth0 no-carrier`), in the order seen.
package struct JournalReason: Sendable, Equatable {
    package var interface: InterfaceName
    package var reason: Reason

    package init(_ interface: InterfaceName, _ reason: Reason) {
        self.interface = interface
        self.reason = reason
    }
}

/// One entry of the outage journal, the gateway's own record of what happened: a
/// period without a primary (the site offline), a period an uplink was not online, a
/// change of the primary, a period a metered uplink carried the site (its primary), a
/// period the agent itself did not run, the moment the wall
/// clock was synchronised (so that earlier times of that boot can be corrected), or a
/// count of records dropped to keep the journal within its bound.
package struct JournalRecord: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case site
        case uplink
        case failover
        /// A metered uplink (cellular, or said so) was the primary: the site's time on
        /// it, and the bytes it carried then.
        case metered
        case absent
        case clock
        case dropped
    }

    /// Why the agent was not running (`absent` records).
    package enum AbsenceCause: String, Sendable, CaseIterable {
        /// It stopped cleanly: the start of the gap is exact.
        case stopped
        /// A crash, a kill or a power cut: the gap starts at its last sign of life; it
        /// may have run up to `uncertaintySeconds` longer.
        case lost
    }

    package var kind: Kind
    /// The record's number in its journal (`seq`), counted up by the agent that wrote
    /// it: what delivery over MQTT acknowledges, and how a subscriber tells a repeat.
    /// Nil for a record not yet appended.
    package var sequence: Int?
    /// The uplink of an `uplink` or `metered` record.
    package var interface: InterfaceName?
    package var start: JournalTime
    /// Equal to `start` for a failover, a clock record and a drop count.
    package var end: JournalTime
    /// The reasons of the uplinks involved over the period, each change once.
    package var reasons: [JournalReason] = []
    package var primaryBefore: InterfaceName?
    package var primaryAfter: InterfaceName?
    /// Why the primary changed (failover records).
    package var primaryReason: PrimaryChangeReason?
    /// Failover records: how long before the change the previous primary was last
    /// proven to work, the most its failure can have gone unseen.
    package var detectionMilliseconds: Int?
    /// Modem recovery steps taken during the period, per uplink.
    package var recoverySteps: [InterfaceName: Int] = [:]
    /// Bytes each metered uplink carried during the period (its data plan's count).
    package var bytes: [InterfaceName: Int] = [:]
    package var cause: AbsenceCause?
    /// `absent`, cause `lost`: how much later than `start` the agent may have stopped.
    package var uncertaintySeconds: Int?
    /// `dropped`: how many of the oldest records were dropped at this point.
    package var droppedCount: Int?
    /// A period still open when the journal was read (from the checkpoint): its end
    /// is the moment it was read, or the agent's last sign of life. Never written.
    package var ongoing = false

    package init(kind: Kind, interface: InterfaceName? = nil, start: JournalTime, end: JournalTime) {
        self.kind = kind
        self.interface = interface
        self.start = start
        self.end = end
    }

    package var durationMilliseconds: Int { start.milliseconds(to: end) }
}
