/// Turns the agent's successive states into journal records: it keeps the periods
/// still open (the site without a primary, each uplink not online, a metered uplink
/// as the primary) and closes each
/// into a record when it ends; a change between two primaries is a failover record at
/// once. Fed every published state with the time it was taken; it never touches the
/// system (the adapter appends the records and keeps the checkpoint on disk).
package struct OutageJournal: Sendable {
    /// A period that has begun and not yet ended, with what it needs at its end.
    package struct OpenPeriod: Sendable, Equatable {
        package var record: JournalRecord
        /// Each uplink's modem recoveries and plan count when the period began.
        var recoveriesAtStart: [InterfaceName: Int] = [:]
        var bytesAtStart: [InterfaceName: Int] = [:]
        /// Open when the agent last stopped: if it no longer holds at the first
        /// decided state, it ended while the agent was away.
        var carried = false
    }

    /// What one observation changed: records closed (to append), and whether the set
    /// of open periods changed (the checkpoint should then be saved).
    package struct Update: Sendable, Equatable {
        package var records: [JournalRecord] = []
        package var openPeriodsChanged = false
    }

    package private(set) var site: OpenPeriod?
    package private(set) var uplinks: [InterfaceName: OpenPeriod] = [:]
    package private(set) var metered: OpenPeriod?
    private var primary: InterfaceName?
    /// The last primary there was (a site record's `primary_before`).
    private var lastPrimary: InterfaceName?
    /// Periods carried over from before a restart end, if they no longer hold at the
    /// first decided state, when the agent was last known to run.
    private var carriedEnd: JournalTime?

    package init() {}

    /// Every open period, the site's first.
    package var openPeriods: [OpenPeriod] {
        let site: [OpenPeriod] = self.site.map { [$0] } ?? []
        let uplinks: [OpenPeriod] = self.uplinks.keys.sorted().map { self.uplinks[$0]! }
        let metered: [OpenPeriod] = self.metered.map { [$0] } ?? []
        return site + uplinks + metered
    }

    // MARK: - Start-up

    /// At start: the record of the agent's own absence since its last checkpoint, and
    /// the periods that were open then, carried on (an outage across a restart stays
    /// one record). `lostAfterSeconds`: how long a checkpoint may be old while the
    /// agent runs, which bounds how much earlier a crash or power cut happened.
    package mutating func resume(from checkpoint: JournalCheckpoint?, at now: JournalTime,
                                 lostAfterSeconds: Int) -> [JournalRecord] {
        guard let checkpoint else { return [] }
        for var period in checkpoint.open {
            period.carried = true
            switch period.record.kind {
            case .site: site = period
            case .uplink: if let name = period.record.interface { uplinks[name] = period }
            case .metered: metered = period
            default: break
            }
        }
        // Not `primary`: the first primary after a start is no failover, whichever
        // uplink validates first.
        lastPrimary = checkpoint.primary ?? checkpoint.open.first { $0.record.kind == .site }?.record.primaryBefore
        carriedEnd = checkpoint.alive
        var absence = JournalRecord(kind: .absent, start: checkpoint.alive, end: now)
        absence.cause = checkpoint.stopped ? .stopped : .lost
        if !checkpoint.stopped { absence.uncertaintySeconds = lostAfterSeconds }
        absence.primaryBefore = checkpoint.primary
        return [absence]
    }

    /// What to save so that a restart can account for the time in between.
    package func checkpoint(at now: JournalTime, stopped: Bool) -> JournalCheckpoint {
        JournalCheckpoint(alive: now, stopped: stopped, primary: primary, open: openPeriods)
    }

    // MARK: - Observation

    /// Takes in the agent's state at `now`; `events` are the hook events of the same
    /// change (a failover's reason comes from its primary event).
    package mutating func observe(_ state: AgentState, events: [HookEvent], at now: JournalTime) -> Update {
        var update = Update()
        let decided = state.primary != nil || !state.uplinks.contains { $0.verdict == .unknown }
        if let failover = failover(to: state, events: events, at: now) { update.records.append(failover) }
        if state.primary != nil || decided { primary = state.primary }

        let carriedEnd = decided ? self.carriedEnd : nil
        if decided { self.carriedEnd = nil }
        /// When a period ends: now, or for one carried over a restart that no longer
        /// holds at the first decided state, when the agent was last known to run.
        func end(of period: OpenPeriod) -> JournalTime { period.carried ? carriedEnd ?? now : now }
        observeUplinks(state, decided: decided, at: now, end: { end(of: $0) }, into: &update)
        observeSite(state, decided: decided, at: now, end: { end(of: $0) }, into: &update)
        observeMetered(state, decided: decided, at: now, end: { end(of: $0) }, into: &update)
        if let current = state.primary { lastPrimary = current }
        return update
    }

    /// The record of a change from one primary to another, nil when there is none.
    private func failover(to state: AgentState, events: [HookEvent], at now: JournalTime) -> JournalRecord? {
        guard let before = primary, let after = state.primary, before != after else { return nil }
        var failover = JournalRecord(kind: .failover, start: now, end: now)
        failover.primaryBefore = before
        failover.primaryAfter = after
        let event = events.last { $0.kind == .primary && $0.primary == after }
        failover.primaryReason = event?.primaryReason
        failover.detectionMilliseconds = event?.previousPrimaryProvenMillisecondsAgo
        failover.reasons = state.uplinks.filter { $0.interface == before && $0.verdict != .online }
            .map { JournalReason(before, $0.reason) }
        return failover
    }

    /// Each uplink's period: opened when it is decided not online, noting each new
    /// reason, closed when it is online again or gone from a decided state.
    private mutating func observeUplinks(_ state: AgentState, decided: Bool, at now: JournalTime,
                                         end: (OpenPeriod) -> JournalTime, into update: inout Update) {
        for uplink in state.uplinks where uplink.verdict != .unknown {
            let name = uplink.interface
            if uplink.verdict == .online {
                if let period = uplinks.removeValue(forKey: name) {
                    update.records.append(closed(period, at: end(period), state: state))
                    update.openPeriodsChanged = true
                }
            } else if var period = uplinks[name] {
                note(uplink, in: &period.record)
                uplinks[name] = period
            } else {
                var record = JournalRecord(kind: .uplink, interface: name, start: now, end: now)
                record.primaryBefore = primary
                note(uplink, in: &record)
                uplinks[name] = opened(record, state: state)
                update.openPeriodsChanged = true
            }
        }
        // An uplink gone from the state (unplugged, or gone while the agent was away):
        // its period ends, for nothing more is known of it.
        guard decided else { return }
        for name in uplinks.keys.sorted() where !state.uplinks.contains(where: { $0.interface == name }) {
            let period = uplinks.removeValue(forKey: name)!
            update.records.append(closed(period, at: end(period), state: state))
            update.openPeriodsChanged = true
        }
    }

    /// The site's period without a primary: opened at a decided state without one,
    /// closed when there is one again.
    private mutating func observeSite(_ state: AgentState, decided: Bool, at now: JournalTime,
                                      end: (OpenPeriod) -> JournalTime, into update: inout Update) {
        if state.primary != nil, let period = site {
            site = nil
            update.records.append(closed(period, at: end(period), state: state))
            update.openPeriodsChanged = true
        } else if state.primary == nil && decided {
            if var period = site {
                for uplink in state.uplinks where uplink.verdict != .unknown { note(uplink, in: &period.record) }
                site = period
            } else {
                var record = JournalRecord(kind: .site, start: now, end: now)
                record.primaryBefore = lastPrimary
                for uplink in state.uplinks where uplink.verdict != .unknown { note(uplink, in: &record) }
                site = opened(record, state: state)
                update.openPeriodsChanged = true
            }
        }
    }

    /// The site's time on a metered primary: a period per metered uplink while it is
    /// the primary, ended when the primary changes (or there is none).
    private mutating func observeMetered(_ state: AgentState, decided: Bool, at now: JournalTime,
                                         end: (OpenPeriod) -> JournalTime, into update: inout Update) {
        guard state.primary != nil || decided else { return }
        let carrier = state.uplinks.first { $0.interface == state.primary && $0.metered }?.interface
        if let period = metered, period.record.interface != carrier {
            metered = nil
            update.records.append(closed(period, at: end(period), state: state))
            update.openPeriodsChanged = true
        }
        if let carrier, metered == nil {
            metered = opened(JournalRecord(kind: .metered, interface: carrier, start: now, end: now), state: state)
            update.openPeriodsChanged = true
        }
    }

    /// Adds the uplink's reason to the period's list unless it is already its latest.
    private func note(_ uplink: UplinkStatus, in record: inout JournalRecord) {
        guard uplink.verdict != .online else { return }
        let latest = record.reasons.last { $0.interface == uplink.interface }
        if latest?.reason != uplink.reason { record.reasons.append(JournalReason(uplink.interface, uplink.reason)) }
    }

    private func opened(_ record: JournalRecord, state: AgentState) -> OpenPeriod {
        OpenPeriod(record: record, recoveriesAtStart: Self.recoveries(state), bytesAtStart: Self.planBytes(state))
    }

    private func closed(_ period: OpenPeriod, at end: JournalTime, state: AgentState) -> JournalRecord {
        var record = period.record
        record.end = end
        record.primaryAfter = state.primary
        for (name, total) in Self.recoveries(state) {
            let steps = total - (period.recoveriesAtStart[name] ?? 0)
            if steps > 0 { record.recoverySteps[name] = steps }
        }
        for (name, total) in Self.planBytes(state) {
            let before = period.bytesAtStart[name] ?? 0
            // A new billing cycle in between restarted the count.
            let counted = total >= before ? total - before : total
            if counted > 0 { record.bytes[name] = counted }
        }
        return record
    }

    private static func recoveries(_ state: AgentState) -> [InterfaceName: Int] {
        var result: [InterfaceName: Int] = [:]
        for uplink in state.uplinks { if let modem = uplink.modem { result[uplink.interface] = modem.recoveriesTotal } }
        return result
    }

    private static func planBytes(_ state: AgentState) -> [InterfaceName: Int] {
        var result: [InterfaceName: Int] = [:]
        for uplink in state.uplinks { if let plan = uplink.plan { result[uplink.interface] = plan.usedBytes } }
        return result
    }
}

/// What the journal saves besides its records: when the agent was last known to run,
/// whether it stopped cleanly, and the periods open then, so that the next start can
/// record the gap and carry the periods on.
package struct JournalCheckpoint: Sendable, Equatable {
    package var alive: JournalTime
    package var stopped: Bool
    package var primary: InterfaceName?
    package var open: [OutageJournal.OpenPeriod]

    package init(alive: JournalTime, stopped: Bool, primary: InterfaceName?, open: [OutageJournal.OpenPeriod]) {
        self.alive = alive
        self.stopped = stopped
        self.primary = primary
        self.open = open
    }

    /// Without the periods whose record the journal already holds: the agent died
    /// between appending a closed period and saving the checkpoint that still had it
    /// open, and carrying it on would record it twice. `records`: the journal's last.
    package func withoutRecorded(_ records: [JournalRecord]) -> JournalCheckpoint {
        var copy = self
        copy.open = open.filter { period in
            !records.contains { $0.kind == period.record.kind && $0.interface == period.record.interface
                && $0.start == period.record.start }
        }
        return copy
    }

    /// The periods still open, as records for a reader (`ongoing`): while the agent
    /// runs (it saved this checkpoint within `freshSeconds` and did not stop) they
    /// last until `now`; otherwise until its last sign of life, all that is known.
    package func ongoing(nowWallSeconds now: Int, freshSeconds: Int) -> [JournalRecord] {
        let running = !stopped && now - alive.wallSeconds <= freshSeconds
        var end = alive
        if running && now > alive.wallSeconds {
            end.monotonicMilliseconds += (now - alive.wallSeconds) * 1000
            end.wallSeconds = now
        }
        return open.map { period in
            var record = period.record
            record.end = end
            record.ongoing = true
            return record
        }
    }
}
