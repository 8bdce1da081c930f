/// Where a cold backup's modem bearer stands, as the agent handles it.
enum BearerStandby: Sendable, Equatable {
    /// As ModemManager keeps it: the agent leaves it alone.
    case none
    /// Disconnected by the agent while the backup waits.
    case parked
    /// Asked to connect again (since then): the backup is needed.
    case unparking(sinceMilliseconds: Int)

    var isParked: Bool { self != .none }
}

/// How a backup waits and how the primary is watched: a cold backup sends nothing
/// while another uplink carries the traffic (and may keep its modem's bearer down),
/// and a metered uplink serving as the primary is checked on a cadence of its own.
extension AgentCore {
    /// A connection asked of a parked bearer that has not come up by then is given up:
    /// the modem's word (bearer-disconnected) and its recovery ladder take over.
    static let bearerConnectMilliseconds = 30_000

    /// The settings the uplink's role makes: while it is the primary it is checked at
    /// least every `primary-interval` (a metered backup's 20 minutes would leave a dead
    /// upstream unseen for that long while the LAN is idle), by liveness rounds (a bare
    /// TCP handshake, 224 bytes) between its light rounds.
    func roleSettings(_ settings: ProbingSettings, of name: InterfaceName) -> ProbingSettings {
        var settings = settings
        if name == selector.primary, let interval = settings.metering.primaryIntervalMilliseconds,
           interval < settings.livenessIntervalMilliseconds ?? settings.intervalMilliseconds {
            settings.livenessIntervalMilliseconds = interval
        }
        return settings
    }

    /// The primary moved: the uplinks it left and reached change cadence now (the new
    /// primary's next check is due within its primary interval).
    mutating func primaryRolesChanged(from previous: InterfaceName?, now: Instant) {
        for name in Set([previous, selector.primary].compactMap { $0 }) {
            refreshSettings(of: name)
            if name == selector.primary, var uplink = uplinks[name], uplink.round.isIdle {
                uplink.scheduleLivenessCheck(now: now)
                uplinks[name] = uplink
            }
        }
    }

    /// Whether another uplink, online, carries what `name` would: `name` is neither the
    /// primary nor a family's primary. A primary over its plan as the last resort does
    /// not count: it is to hand over as soon as another uplink is online, so a cold
    /// backup must be probed (and its bearer connected) to become that uplink.
    func isStandingBy(_ name: InterfaceName) -> Bool {
        guard let primary = selector.primary, primary != name, let carrier = uplinks[primary], carrier.isOnline,
              !capRole(of: carrier).lastResort else { return false }
        return !familyPrimaries.values.contains(name)
    }

    /// The primary is in doubt on evidence against it: the backup that would take over
    /// is needed soon (its verification, or its bearer, starts now).
    var primaryInDoubt: Bool {
        selector.primary.flatMap { uplinks[$0]?.doubt.map { $0.suspectsUplink && $0.wakesColdBackups } } ?? false
    }

    /// A cold backup waiting: no periodic round while another uplink is primary. A
    /// doubt of its own (its link changed) or a verification (it is about to take over,
    /// or would if the primary failed) still probes it.
    func isResting(_ uplink: Uplink) -> Bool {
        uplink.settings.metering.standby == .cold && uplink.doubt == nil && uplink.verification != .wanted
            && !verifyTargets.contains(uplink.name) && isStandingBy(uplink.name)
    }

    /// Whether a cold backup with `standby-bearer = disconnected` should have its
    /// bearer down now.
    private func wantsParked(_ uplink: Uplink) -> Bool {
        uplink.settings.metering.standby == .cold && uplink.settings.metering.standbyBearer == .disconnected
            && isStandingBy(uplink.name) && !primaryInDoubt
    }

    /// Parks and unparks the bearers of cold backups: disconnected while another
    /// uplink is primary and healthy, connected again the moment it is lost or falls
    /// in doubt (the connection's seconds then overlap the primary's confirmation).
    mutating func standbyBearerSteps(now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        var actions: [Action] = []
        // Uplinks whose modem's word changes meaning: a bearer given up, or one found
        // down that is now the agent's to keep down.
        var rejudged: [ObservedUplink] = []
        for name in uplinks.keys.sorted() {
            guard let uplink = uplinks[name], let id = modemID(for: name), var record = modemRecords[id] else { continue }
            let connected = record.facts?.bearers.contains(where: \.connected) ?? false
            switch record.standby {
            case .none:
                guard wantsParked(uplink), record.facts != nil else { continue }
                record.standby = .parked
                if connected {
                    actions.append(.standbyBearer(equipmentID: id, connected: false))
                } else {
                    // Already down (parked by an agent before a restart): kept down, not
                    // dialled again by the recovery ladder only to be parked once more.
                    rejudged.append(uplink.observed)
                }
            case .parked:
                guard !wantsParked(uplink) else { continue }
                record.standby = .unparking(sinceMilliseconds: at)
                actions.append(.standbyBearer(equipmentID: id, connected: true))
            case .unparking(let since):
                guard connected || at - since >= AgentCore.bearerConnectMilliseconds else { continue }
                record.standby = .none
                // Given up: the modem's own word (bearer-disconnected) stands from now.
                if !connected { rejudged.append(uplink.observed) }
            }
            modemRecords[id] = record
        }
        for observed in rejudged { actions += observe(observed, events: [], now: now) }
        return actions
    }

    /// Modems whose bearer the agent keeps down: connected again when the agent stops,
    /// so a backup never stays offline because its agent went away.
    package var parkedBearers: [String] {
        modemRecords.filter { $0.value.standby == .parked }.keys.sorted()
    }

    /// When a bearer must be parked or unparked (at once: the decision was made while
    /// no step was taken, by a stall alarm say), or a connection given up.
    var nextStandbyWakeMilliseconds: Int? {
        var wakes: [Int] = []
        for uplink in uplinks.values {
            guard let id = modemID(for: uplink.name), let record = modemRecords[id] else { continue }
            let connected = record.facts?.bearers.contains(where: \.connected) ?? false
            switch record.standby {
            case .none where wantsParked(uplink) && record.facts != nil: wakes.append(latestMilliseconds)
            case .parked where !wantsParked(uplink): wakes.append(latestMilliseconds)
            case .unparking(let since) where !connected: wakes.append(since + AgentCore.bearerConnectMilliseconds)
            default: break
            }
        }
        return wakes.min()
    }

    /// A parked backup whose bearer the agent keeps down, as a candidate for primary:
    /// while it is needed it stands as online but unverified, so the selector waits for
    /// it (the old choice stands, one primary change) while its bearer connects and its
    /// first round validates.
    func standbyCandidate(_ candidate: inout PrimarySelector.Candidate, _ uplink: Uplink) {
        guard uplink.machine.assessment.reason == .standby, let id = modemID(for: uplink.name),
              modemRecords[id]?.standby.isParked == true, !wantsParked(uplink) else { return }
        candidate.verdict = .online
        candidate.fresh = false
    }
}
