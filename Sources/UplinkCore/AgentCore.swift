/// A probe left out of light rounds over one family.
struct SidelinedProbe: Hashable, Sendable {
    var name: String
    var family: AddressFamily
}

/// The agent's decisions, free of I/O: which uplinks exist, when each is probed and
/// how (light, full or verification rounds), what each verdict is, which uplink is
/// primary, and what hooks must hear. The runtime feeds it link states, finished
/// rounds, the primary's packet counters and the time, and carries out the actions it
/// returns.
///
/// Cheap evidence first: link events and the primary's own traffic make an uplink
/// suspect at no cost; while an uplink is online and nothing is suspect a round is one
/// light probe per family; any doubt starts a full round, and only a full round (the
/// quorum of the probe set) takes an uplink out of `online`.
public struct AgentCore: Sendable {
    /// What the runtime must do.
    public enum Action: Sendable, Equatable {
        /// Run this round; report back with the same generation.
        case startRound(RoundPlan, generation: Int)
        case runHook(HookEvent)
        /// A decision worth a log line that no hook event carries (flap damping).
        case note(String)
    }

    /// Time limits of rounds on an online uplink never go below these: a healthy
    /// exchange needs at least a few round trips, and Linux retransmits a lost SYN
    /// after one second.
    public static let exchangeFloorMilliseconds = 1_000
    public static let lookupFloorMilliseconds = 1_000
    /// Answered traffic postpones at most this many light rounds in a row, so a portal
    /// that appears on a busy primary is still found.
    public static let maximumSkippedLightRounds = 2
    /// After a passive alarm that a full round disproved, alarms pause for this long,
    /// doubling up to the maximum (one-way traffic must not cost a round every second).
    public static let falseAlarmPauseMilliseconds = 10_000...300_000

    struct Uplink: Sendable {
        var name: InterfaceName
        var index: Int
        var kind: InterfaceKind
        var link: LinkEvaluator.Result
        var metered: Bool
        var leaseSaysMetered: Bool
        var settings: ProbingSettings
        var machine: VerdictMachine
        var schedule: ProbeSchedule
        /// The round in flight, if any: a round is accepted only while it is still the
        /// uplink's current one, so a round started before a link change cannot decide
        /// after it.
        var round: (generation: Int, purpose: RoundPurpose, shortened: Bool)?
        /// A full round at shortened limits found the uplink slow, not dead: the next
        /// round uses the configured ceilings before a verdict may change.
        var ceilingsNext = false
        /// The next round was asked for by a link event or a hook (allowed over budget).
        var linkTriggered = false
        /// A round was asked for while one was in flight: start another right after.
        var probeAgain = false
        /// Something is in doubt: the next round is a full one.
        var doubt = false
        /// The doubt came from a passive alarm (a validated full round disproves it).
        var alarmPending = false
        /// Where the last round found the uplink's DNS servers.
        var dnsSource: DNSSource?
        /// The session the captive-portal API told of in the last full round.
        var session: CaptivePortalSession?
        /// Its addresses and gateways as last observed, and the last round's servers.
        var network = UplinkNetwork()
        /// Its usable addresses when it last had any: what its NATed connections used.
        var lastAddresses: [IPAddress] = []
        /// When a round last validated (light, verification or full).
        var lastValidatedMilliseconds: Int?
        /// When the last round of any purpose finished.
        var lastRoundMilliseconds: Int?
        var exchangeTimes = RoundTripEstimator()
        var lookupTimes = RoundTripEstimator()
        var answers = DNSAnswerCache()
        /// Next probe of the set for a light round, per family.
        var lightRotation: [AddressFamily: Int] = [:]
        /// Probes that failed over a family while their full round validated (blocked
        /// or allow-listed endpoints, names without an AAAA record): light rounds skip
        /// them in that family until they validate again.
        var sidelined: Set<SidelinedProbe> = []
        /// A verification round is wanted (a backup about to take over, or the one that
        /// would if the primary failed).
        var verifyRequested = false
        /// When the uplink was last verified because the primary fell in doubt.
        var lastPreverifyMilliseconds: Int?
        /// A verification probe failed; not a candidate until a full round validates.
        var verificationFailed = false
        var traffic = TrafficMonitor()
        var lastAnsweredTrafficMilliseconds: Int?
        /// When a light round was last skipped for answered traffic.
        var lastSkipMilliseconds: Int?
        var skippedLightRounds = 0
        var alarmPauseMilliseconds = AgentCore.falseAlarmPauseMilliseconds.lowerBound
        var alarmsPausedUntilMilliseconds = 0
        /// Round-trip time and loss per family, learned while the uplink is online.
        var quality: [AddressFamily: QualityEstimator] = [:]
        /// Probes of rounds that raised a doubt not settled yet: they count once the
        /// uplink is confirmed online, and are dropped if it leaves (an outage is not
        /// the link's quality).
        var pendingQuality: [ProbeReport] = []
        var degraded = false
        /// When `degraded` last changed (or the uplink came online).
        var qualitySinceMilliseconds = 0
        /// A failed full round that showed life, waiting for the next look (merged).
        var earlierLook: CheckReport?
        var looks = 0
        /// When a probe failed while the uplink waited out its hold-down: the
        /// hold-down starts again from there (it must answer every probe of it).
        var holdDownRestartMilliseconds: Int?

        var isOnline: Bool { machine.verdict == .online }

        /// The figures of its best online family (IPv4 first), else of any family.
        var figures: QualityFigures? {
            let families = AddressFamily.allCases.filter { quality[$0] != nil }
            let online = families.filter { machine.families[$0]?.verdict == .online }
            return (online.first ?? families.first).flatMap { quality[$0]?.figures }
        }

        /// Losing enough packets that rounds are not hurried: they get the ceilings.
        func isLossy(_ thresholds: QualityThresholds) -> Bool {
            (figures?.lossPercent ?? 0) * 2 >= thresholds.lossPercent
        }

        /// The link changed under the uplink: what was learned of it (DNS answers,
        /// round-trip times) may no longer hold.
        mutating func forgetWhatWasLearned() {
            // Earlier looks of a doubt saw the old link: they cannot vouch for this one.
            earlierLook = nil
            looks = 0
            pendingQuality = []
            answers.clear()
            exchangeTimes.reset()
            lookupTimes.reset()
        }
    }

    public private(set) var configuration: Configuration
    public var policy: AgentPolicy { configuration.agent }
    private var uplinks: [InterfaceName: Uplink] = [:]
    /// Byte budgets by interface name; they outlive an uplink that vanishes and comes
    /// back (a modem re-enumerating must not reset its metered day).
    private var budgets: [InterfaceName: ByteBudget] = [:]
    /// Flap damping by interface name, for the same reason: a modem that flaps by
    /// re-enumerating must not start clean every time.
    private var dampings: [InterfaceName: FlapDamping] = [:]
    /// Round generations grow across all uplinks for the life of the core, so a round
    /// of a vanished uplink can never match one of its successor.
    private var lastGeneration = 0
    private var selector = PrimarySelector()
    /// The primary of each address family, chosen the same way from the family's own
    /// verdicts: an uplink whose IPv6 is broken keeps IPv4 but not IPv6 traffic.
    private var familySelectors: [AddressFamily: PrimarySelector] = [.ipv4: PrimarySelector(), .ipv6: PrimarySelector()]
    /// The last primary that vanished, with its last addresses.
    private var vanishedPrimary: (name: InterfaceName, addresses: [IPAddress])?
    /// The latest time the core was told (wake-ups are only ever in the future).
    private var latestMilliseconds = 0

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public var primary: InterfaceName? { selector.primary }
    /// The primary of each family that has one.
    public var familyPrimaries: [AddressFamily: InterfaceName] {
        familySelectors.compactMapValues(\.primary)
    }

    /// Backups to verify before they take over, overall or in one family.
    private var verifyTargets: Set<InterfaceName> {
        Set(([selector] + familySelectors.values).compactMap(\.toVerify))
    }
    public var uplinkNames: [InterfaceName] { uplinks.keys.sorted() }

    public func verdict(of name: InterfaceName) -> Assessment? { uplinks[name]?.machine.assessment }

    public func isMetered(_ name: InterfaceName) -> Bool? { uplinks[name]?.metered }

    /// Probe bytes by interface since the core started: never reset, unlike the day's
    /// count in the state (the metrics export's counter).
    public var probeBytesTotals: [InterfaceName: Int] { budgets.mapValues(\.totalBytes) }

    public func settings(of name: InterfaceName) -> ProbingSettings? { uplinks[name]?.settings }

    /// Applies a new configuration (HUP): settings and budgets change, verdicts stay.
    public mutating func reconfigure(_ configuration: Configuration) {
        self.configuration = configuration
        for name in uplinks.keys { refreshSettings(of: name) }
    }

    private mutating func refreshSettings(of name: InterfaceName) {
        guard var uplink = uplinks[name] else { return }
        (uplink.metered, uplink.settings) = resolvedSettings(of: name, kind: uplink.kind,
                                                             leaseSaysMetered: uplink.leaseSaysMetered)
        budgets[name, default: ByteBudget(limitBytes: nil)].limitBytes = uplink.settings.dailyBudgetBytes
        // A shorter interval takes effect now, not after the old one ran out; and an
        // online uplink that was not probed (probe-when-online = no) may be again.
        if let last = uplink.lastRoundMilliseconds, case .probe = uplink.link, uplink.round == nil {
            let next = last + uplink.settings.intervalMilliseconds
            if let due = uplink.schedule.nextDueMilliseconds {
                if due > next { uplink.schedule.postpone(until: next) }
            } else if uplink.settings.probeWhenOnline {
                uplink.schedule.postpone(until: next)
            }
        }
        uplinks[name] = uplink
    }

    /// Whether an uplink is metered, and its probing settings, from the configuration.
    private func resolvedSettings(of name: InterfaceName, kind: InterfaceKind,
                                  leaseSaysMetered: Bool) -> (metered: Bool, settings: ProbingSettings) {
        let metered = configuration.isMetered(name, kind: kind, leaseSaysMetered: leaseSaysMetered)
        return (metered, configuration.probingSettings(for: name, kind: kind, metered: metered))
    }

    // MARK: inputs

    /// The uplinks as they are now and the link events since the last call.
    public mutating func linksChanged(uplinks current: [ObservedUplink], events: [LinkEvent], now: Instant) -> [Action] {
        var hooks: [HookEvent] = []
        var notes: [String] = []
        let currentNames = Set(current.map(\.facts.name))

        let vanished = Set(events.compactMap { event -> InterfaceName? in
            if case .disappeared(let facts) = event { return facts.name } else { return nil }
        })
        for name in uplinks.keys.sorted() where !currentNames.contains(name) {
            var uplink = uplinks.removeValue(forKey: name)!
            // Gone before the primary moved away from it: the primary event still
            // needs its addresses.
            if name == selector.primary { vanishedPrimary = (name, uplink.lastAddresses) }
            let previous = uplink.machine.verdict
            // Gone from the kernel, or no longer selected as an uplink (configuration).
            let reason: Reason = vanished.contains(name) ? .noSuchInterface : .notAnUplink
            if uplink.machine.linkChanged(.down(reason: reason), now: now) {
                hooks.append(verdictEvent(uplink, previous: previous, now: now))
                notes += verdictChanged(&uplink, from: previous, now: now)
            }
        }

        for observed in current {
            let facts = observed.facts
            let name = facts.name
            let link = LinkEvaluator.evaluate(facts)
            let isNew = uplinks[name] == nil
            let (metered, settings) = resolvedSettings(of: name, kind: observed.kind,
                                                       leaseSaysMetered: observed.leaseSaysMetered)
            var uplink = uplinks[name] ?? Uplink(
                name: name, index: facts.index, kind: observed.kind, link: link, metered: metered,
                leaseSaysMetered: observed.leaseSaysMetered, settings: settings, machine: VerdictMachine(now: now),
                schedule: ProbeSchedule(settings: settings))
            uplink.kind = observed.kind
            uplink.index = facts.index
            uplink.leaseSaysMetered = observed.leaseSaysMetered
            uplink.metered = metered
            uplink.settings = settings
            budgets[name, default: ByteBudget(limitBytes: nil)].limitBytes = settings.dailyBudgetBytes
            let previousLink = uplink.link
            uplink.link = link
            uplink.network = UplinkNetwork(facts: facts, dnsServers: uplink.network.dnsServers)
            if !uplink.network.addresses.isEmpty { uplink.lastAddresses = uplink.network.addresses.map(\.address) }
            let previous = uplink.machine.verdict
            if uplink.machine.linkChanged(link, now: now) {
                hooks.append(verdictEvent(uplink, previous: previous, now: now))
                notes += verdictChanged(&uplink, from: previous, now: now)
            }
            switch link {
            case .down:
                uplink.schedule.stop()
                uplink.round = nil
                uplink.doubt = false
                uplink.probeAgain = false
                uplink.verifyRequested = false
                uplink.alarmPending = false
                uplink.ceilingsNext = false
                uplink.quality = [:]
                uplink.degraded = false
                uplink.forgetWhatWasLearned()
            case .probe:
                let touched = events.filter { $0.facts.name == name }
                if isNew || previousLink != link || touched.contains(where: AgentCore.canChangeAnswer) {
                    // The link changed under the uplink: the next round decides afresh.
                    uplink.forgetWhatWasLearned()
                    uplink.round = nil
                    uplink.doubt = true
                    uplink.schedule.probeNow(at: now.monotonicMilliseconds, settings: settings)
                    uplink.linkTriggered = true
                } else if !touched.isEmpty {
                    // Any other event on the uplink (an extra address gone, a second
                    // route changed) is a doubt: confirm with a full round.
                    uplink.answers.clear()
                    startDoubt(&uplink, now: now.monotonicMilliseconds)
                }
            }
            uplinks[name] = uplink
        }
        return hooks.map(Action.runHook) + notes.map(Action.note) + reselectPrimary(now: now) + dueRounds(now: now)
    }

    /// A probe round finished. Results of a stale generation only count their bytes.
    public mutating func roundFinished(_ report: CheckReport, generation: Int, now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        // Bytes were spent whatever became of the uplink.
        budgets[report.interface, default: ByteBudget(limitBytes: nil)]
            .record(report.totalBytes, at: at)
        guard var uplink = uplinks[report.interface], let round = uplink.round, round.generation == generation else {
            return dueRounds(now: now)
        }
        uplink.round = nil
        uplink.lastRoundMilliseconds = at
        if let dns = report.dns {
            uplink.dnsSource = dns.source
            uplink.network.dnsServers = dns.addresses
        }
        learn(from: report, into: &uplink, now: at)
        if round.purpose == .full { uplink.session = CaptivePortalSession(report.captivePortal?.status, now: now) }
        let validated = report.assessment.verdict == .online
        // A full round together with what the earlier looks of the same doubt validated.
        let looked = uplink.earlierLook.map {
            SecondLook.merged($0, report, thresholdPercent: uplink.settings.successThresholdPercent)
        } ?? report
        var actions: [Action] = []
        switch round.purpose {
        case .light:
            // Held when every family the last full round found online still is (an
            // uplink online over IPv4 with broken IPv6 keeps failing IPv6 quietly).
            let online = AddressFamily.allCases.filter { uplink.machine.families[$0]?.verdict == .online }
            let held = validated && online.allSatisfy { report.families[$0]?.verdict == .online }
            // A family that was not online validated: only a full round may say it is
            // back (and give it its primary role again).
            let familyBack = AddressFamily.allCases.contains { family in
                uplink.machine.families[family].map { $0.verdict != .online } == true
                    && report.families[family]?.verdict == .online
            }
            if held {
                uplink.lastValidatedMilliseconds = at
                uplink.schedule.roundFinished(at: at, suspect: false, online: true, settings: uplink.settings)
                if familyBack { startDoubt(&uplink, now: at) }
            } else {
                uplink.answers.clear()
                if selector.heldDown.contains(uplink.name) { uplink.holdDownRestartMilliseconds = at }
                startDoubt(&uplink, now: at)
            }
        case .verify:
            if validated {
                uplink.lastValidatedMilliseconds = at
                uplink.verificationFailed = false
                if !uplink.doubt {
                    uplink.schedule.roundFinished(at: at, suspect: false, online: uplink.isOnline, settings: uplink.settings)
                }
            } else {
                uplink.verificationFailed = true
                uplink.answers.clear()
                startDoubt(&uplink, now: at)
            }
        case .full where !validated && uplink.isOnline && uplink.looks < SecondLook.maximumLooks
            && SecondLook.showsLife(looked):
            // Packets get through, not enough of them in time (a lossy, loaded or slow
            // link, not a dead one): look again at the configured ceilings, counting
            // what validated so far, before deciding.
            uplink.earlierLook = looked
            uplink.looks += 1
            uplink.ceilingsNext = true
            uplink.schedule.probeNow(at: at, settings: uplink.settings)
        case .full:
            let report = looked
            let validated = report.assessment.verdict == .online
            uplink.earlierLook = nil
            uplink.looks = 0
            uplink.doubt = false
            let previous = uplink.machine.verdict
            if uplink.machine.roundFinished(report.assessment, families: report.families, settings: uplink.settings, now: now) {
                actions.append(.runHook(verdictEvent(uplink, previous: previous, now: now)))
                actions += verdictChanged(&uplink, from: previous, now: now).map(Action.note)
            }
            if validated {
                uplink.lastValidatedMilliseconds = at
                uplink.verificationFailed = false
                // An endpoint that failed while the quorum validated is blocked or
                // allow-listed: light rounds leave it out until it validates again.
                uplink.sidelined = Set(report.probes.filter { $0.judgement != .valid }
                    .map { SidelinedProbe(name: $0.name, family: $0.family) })
                if uplink.alarmPending {
                    // The passive alarm was false (one-way traffic): pause alarms a while.
                    uplink.alarmsPausedUntilMilliseconds = at + uplink.alarmPauseMilliseconds
                    uplink.alarmPauseMilliseconds = min(uplink.alarmPauseMilliseconds * 2,
                                                        AgentCore.falseAlarmPauseMilliseconds.upperBound)
                }
            } else {
                uplink.answers.clear()
                if uplink.alarmPending { uplink.alarmPauseMilliseconds = AgentCore.falseAlarmPauseMilliseconds.lowerBound }
            }
            uplink.alarmPending = false
            if case .probe = uplink.link {
                uplink.schedule.roundFinished(at: at, suspect: uplink.machine.isSuspect, online: uplink.isOnline,
                                              settings: uplink.settings)
            }
        }
        if uplink.isOnline && !uplink.doubt && uplink.earlierLook == nil && !uplink.machine.isSuspect {
            recordQuality(uplink.pendingQuality + report.probes, into: &uplink, now: at)
            uplink.pendingQuality = []
        } else if uplink.isOnline {
            uplink.pendingQuality = Array((uplink.pendingQuality + report.probes).suffix(QualityEstimator.windowAttempts))
        } else {
            uplink.pendingQuality = []
        }
        if uplink.probeAgain {
            uplink.probeAgain = false
            uplink.doubt = true
            uplink.schedule.probeNow(at: at, settings: uplink.settings)
        }
        // The session's end is near: a full round (the one that asks the API) by then.
        if let recheck = uplink.session?.recheckMilliseconds, recheck < uplink.schedule.nextDueMilliseconds ?? Int.max {
            uplink.schedule.postpone(until: recheck)
        }
        uplinks[report.interface] = uplink
        return actions + reselectPrimary(now: now) + dueRounds(now: now)
    }

    /// Probe an uplink at once with a full round, outside its schedule (after a
    /// portal-login hook, say). Allowed over a spent budget, like a link event.
    public mutating func probeNow(_ name: InterfaceName, now: Instant) -> [Action] {
        guard var uplink = uplinks[name], case .probe = uplink.link else { return [] }
        if uplink.round != nil {
            uplink.probeAgain = true
        } else {
            uplink.doubt = true
            uplink.schedule.probeNow(at: now.monotonicMilliseconds, settings: uplink.settings)
        }
        uplink.answers.clear()
        uplink.linkTriggered = true
        uplinks[name] = uplink
        return dueRounds(now: now)
    }

    /// The uplink whose packet counters the runtime should sample, and when: the
    /// primary, while online, with stall detection on.
    public func trafficSampling() -> (interface: InterfaceName, delayMilliseconds: Int)? {
        guard let primary = selector.primary, let uplink = uplinks[primary], uplink.isOnline,
              uplink.settings.stallWindowMilliseconds != nil else { return nil }
        return (primary, uplink.traffic.nextSampleMilliseconds)
    }

    /// The primary's packet counters, sampled. A stall (packets leaving with nothing
    /// back for the window) starts a full round at once; answered traffic postpones
    /// light rounds.
    public mutating func trafficSampled(_ name: InterfaceName, receivedPackets: UInt64, transmittedPackets: UInt64,
                                        now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        guard name == selector.primary, var uplink = uplinks[name], uplink.isOnline,
              let window = uplink.settings.stallWindowMilliseconds else { return [] }
        // Our own probes show in the counters too: what moved while a round ran since
        // the last sample is neither a stall (a failing round raises its own doubt) nor
        // traffic that vouches for the uplink.
        let ours = uplink.round != nil
            || (uplink.lastRoundMilliseconds ?? Int.min) >= (uplink.traffic.lastSampledMilliseconds ?? Int.min)
        if ours {
            uplink.traffic.excuse(receivedPackets: receivedPackets, transmittedPackets: transmittedPackets, at: at)
            uplinks[name] = uplink
            return []
        }
        let observation = uplink.traffic.sample(receivedPackets: receivedPackets, transmittedPackets: transmittedPackets,
                                                at: at, windowMilliseconds: window)
        var actions: [Action] = []
        switch observation {
        case .flowing(answered: true):
            uplink.lastAnsweredTrafficMilliseconds = at
        case .stalled where at >= uplink.alarmsPausedUntilMilliseconds && !uplink.doubt:
            uplink.alarmPending = true
            startDoubt(&uplink, now: at)
            uplinks[name] = uplink
            actions = dueRounds(now: now)
            return actions
        case .stalled:
            // Not acted on now (paused, or a round pending): keep reporting it.
            uplink.traffic.rearm()
        default:
            break
        }
        uplinks[name] = uplink
        return actions
    }

    /// Time passed: start due rounds, end hold-downs.
    public mutating func tick(now: Instant) -> [Action] {
        reselectPrimary(now: now) + dueRounds(now: now)
    }

    /// When the runtime must call `tick` next (monotonic milliseconds), if ever.
    public func nextWakeMilliseconds() -> Int? {
        var wake = ([selector] + familySelectors.values).compactMap(\.holdDownEndsMilliseconds).min()
        for damping in dampings.values {
            guard let release = damping.releaseMilliseconds(settings: policy.damping) else { continue }
            wake = min(wake ?? release, release)
        }
        // A degraded primary's degradation, or a backup's health while the primary is
        // degraded, becomes lasting: the choice may change then.
        let primaryDegraded = selector.primary.flatMap { uplinks[$0]?.degraded } ?? false
        for uplink in uplinks.values where uplink.isOnline && primaryDegraded
            && (uplink.name == selector.primary || !uplink.degraded) {
            let settled = uplink.qualitySinceMilliseconds + policy.degradedForMilliseconds
            guard settled > latestMilliseconds else { continue }
            wake = min(wake ?? settled, settled)
        }
        for uplink in uplinks.values where uplink.round == nil {
            guard let due = uplink.schedule.nextDueMilliseconds else { continue }
            wake = min(wake ?? due, due)
        }
        return wake
    }

    // MARK: outputs

    public func state(now: Instant, pid: Int, stopped: Bool = false) -> AgentState {
        AgentState(primary: selector.primary, uplinks: uplinks.keys.sorted().map { name in
            let uplink = uplinks[name]!
            let assessment = uplink.machine.assessment
            let budget = budgets[name] ?? ByteBudget(limitBytes: nil)
            return UplinkStatus(
                interface: name, kind: uplink.kind, verdict: assessment.verdict, reason: assessment.reason,
                sinceWallSeconds: uplink.machine.since.wallSeconds,
                ipv4: uplink.machine.families[.ipv4]?.verdict, ipv6: uplink.machine.families[.ipv6]?.verdict,
                bytesToday: budget.spentBytes(at: now.monotonicMilliseconds), budgetBytes: budget.limitBytes,
                budgetExhausted: budget.isExhausted(at: now.monotonicMilliseconds),
                portalURL: assessment.verdict == .captive ? assessment.portalURL : nil,
                ipv4Reason: uplink.machine.families[.ipv4]?.reason, ipv6Reason: uplink.machine.families[.ipv6]?.reason,
                dnsSource: uplink.dnsSource, metered: uplink.metered,
                quality: UplinkQualityStatus(
                    figures: uplink.figures ?? QualityFigures(), degraded: uplink.degraded,
                    flapPenalty: Int((dampings[name]?.penalty(at: now.monotonicMilliseconds, settings: policy.damping) ?? 0).rounded()),
                    suppressed: dampings[name]?.suppressed ?? false),
                session: uplink.session ?? CaptivePortalSession())
        }, writtenWallSeconds: now.wallSeconds, pid: pid, stopped: stopped, familyPrimaries: familyPrimaries)
    }

    // MARK: internals

    /// Link events after which a probe can give a different answer.
    static func canChangeAnswer(_ event: LinkEvent) -> Bool {
        switch event {
        case .appeared, .renamed, .addressAdded, .defaultRouteAdded: return true
        case .adminChanged(let facts): return facts.adminUp
        case .carrierChanged(let facts): return facts.carrier
        case .disappeared, .addressRemoved, .defaultRouteRemoved: return false
        }
    }

    /// Something is in doubt about an uplink: a full round at once, and, if it is the
    /// primary, the backup that would take over is verified meanwhile.
    private mutating func startDoubt(_ uplink: inout Uplink, now: Int) {
        uplink.doubt = true
        if uplink.round == nil {
            uplink.schedule.probeNow(at: now, settings: uplink.settings)
        } else {
            uplink.probeAgain = true
        }
        if uplink.name == selector.primary { verifySuccessor(of: uplink.name, now: now) }
    }

    /// Starts verifying the uplink that would take over from `primary` if it failed,
    /// unless it is fresh or busy: the verification then runs beside the primary's
    /// confirmation instead of after it.
    private mutating func verifySuccessor(of primary: InterfaceName, now: Int) {
        let policy = self.policy
        let rank = { (uplink: Uplink) in policy.rank(of: uplink.name, kind: uplink.kind) }
        let successor = uplinks.values
            .filter { $0.name != primary && $0.isOnline && !$0.verificationFailed }
            .min { (rank($0), $0.name) < (rank($1), $1.name) }
        guard var backup = successor, backup.round == nil, !isFresh(backup, now: now) else { return }
        // At most once per the backup's own interval, and never over its budget: a
        // metered backup must not pay for every doubt of the primary (the promotion
        // itself is still verified, whatever the budget).
        if let last = backup.lastPreverifyMilliseconds, now - last < backup.settings.intervalMilliseconds { return }
        if var budget = budgets[backup.name], !budget.allowsPeriodicProbe(at: now) {
            budgets[backup.name] = budget
            return
        }
        backup.lastPreverifyMilliseconds = now
        backup.verifyRequested = true
        backup.schedule.probeNow(at: now, settings: backup.settings)
        uplinks[backup.name] = backup
    }

    private func isFresh(_ uplink: Uplink, now: Int) -> Bool {
        guard let validated = uplink.lastValidatedMilliseconds else { return false }
        return now - validated <= policy.verifyAgeMilliseconds
    }

    /// Quality describes a link that carries traffic: only probes of rounds the uplink
    /// came through online count (see `pendingQuality`).
    private func recordQuality(_ probes: [ProbeReport], into uplink: inout Uplink, now: Int) {
        for probe in probes { uplink.quality[probe.family, default: QualityEstimator()].add(probe) }
        guard let figures = uplink.figures else { return }
        let degraded = policy.quality.isDegraded(figures, wasDegraded: uplink.degraded)
        if degraded != uplink.degraded {
            uplink.degraded = degraded
            uplink.qualitySinceMilliseconds = now
        }
    }

    /// Bookkeeping of a verdict change: coming online starts the time health must last
    /// for; leaving `online` is a flap (damping). Returns log lines.
    private mutating func verdictChanged(_ uplink: inout Uplink, from previous: Verdict, now: Instant) -> [String] {
        let at = now.monotonicMilliseconds
        if uplink.isOnline {
            // Health must last from here; a degradation that outlived the outage
            // keeps its own start.
            if !uplink.degraded { uplink.qualitySinceMilliseconds = at }
            return []
        }
        guard previous == .online else { return [] }
        let settings = policy.damping
        var damping = dampings[uplink.name] ?? FlapDamping()
        let suppressedNow = damping.flapped(at: at, settings: settings)
        dampings[uplink.name] = damping
        guard suppressedNow else { return [] }
        let penalty = Int(damping.penalty(at: at, settings: settings).rounded())
        let release = damping.releaseMilliseconds(settings: settings).map { ($0 - at + 999) / 1_000 } ?? 0
        return ["\(uplink.name): flapping (penalty \(penalty), suppress limit \(settings.suppressLimit)): suppressed by flap damping, not primary again for about \(release) s unless nothing else is online"]
    }

    /// Round-trip times, DNS answers worth keeping, from a finished round.
    private func learn(from report: CheckReport, into uplink: inout Uplink, now: Int) {
        for probe in report.probes where probe.judgement == .valid {
            uplink.exchangeTimes.add(sampleMilliseconds: probe.exchangeMilliseconds)
            if let lookup = probe.dnsMilliseconds { uplink.lookupTimes.add(sampleMilliseconds: lookup) }
            if let host = probe.host, let ttl = probe.dnsTTLSeconds, let bounds = configuration.dns.answerReuseMilliseconds {
                uplink.answers.store(probe.addresses, for: DNSAnswerCache.Key(host: host, family: probe.family),
                                     ttlSeconds: ttl, at: now, bounds: bounds)
            }
        }
    }

    /// What kind of round an uplink gets now.
    private func purpose(of uplink: Uplink, now: Int) -> RoundPurpose {
        if uplink.doubt || !uplink.isOnline || uplink.machine.isSuspect { return .full }
        if let recheck = uplink.session?.recheckMilliseconds, now >= recheck { return .full }
        if uplink.verifyRequested && !isFresh(uplink, now: now) { return .verify }
        return .light
    }

    private func plan(for uplink: inout Uplink, purpose: RoundPurpose, families: [AddressFamily], now: Int) -> RoundPlan {
        let all = uplink.settings.probes(from: configuration.probes)
        var byFamily: [AddressFamily: [ProbeSpec]] = [:]
        var cached: [DNSAnswerCache.Key: [IPAddress]] = [:]
        if purpose != .full {
            // One probe per family, rotating through the set (skipping what is
            // sidelined in that family, and literals of the other family), reusing
            // names resolved within their TTL.
            for family in families {
                let reachable = all.filter { IPAddress($0.url.host).map { $0.family == family } ?? true }
                let usable = reachable.filter { !uplink.sidelined.contains(SidelinedProbe(name: $0.name, family: family)) }
                let pool = usable.isEmpty ? reachable : usable
                guard !pool.isEmpty else { continue }
                let next = uplink.lightRotation[family, default: 0]
                byFamily[family] = [pool[next % pool.count]]
                uplink.lightRotation[family] = next + 1
            }
            cached = uplink.answers.answers(at: now)
        }
        // Rounds on an online uplink use what was learned of it; any other round
        // (start-up, a link that just changed, recovery, a second look at a slow one)
        // the configured ceilings.
        let learned = uplink.isOnline && !uplink.ceilingsNext && !uplink.isLossy(policy.quality)
        let dnsCeiling = configuration.dns.timeoutMilliseconds
        return RoundPlan(
            interface: uplink.name, index: uplink.index, kind: uplink.kind, link: .probe(families), purpose: purpose,
            probes: all, thresholdPercent: uplink.settings.successThresholdPercent,
            timeoutMilliseconds: learned
                ? uplink.exchangeTimes.timeout(floorMilliseconds: AgentCore.exchangeFloorMilliseconds,
                                               ceilingMilliseconds: uplink.settings.timeoutMilliseconds)
                : uplink.settings.timeoutMilliseconds,
            dnsTimeoutMilliseconds: learned
                ? uplink.lookupTimes.timeout(floorMilliseconds: min(AgentCore.lookupFloorMilliseconds, dnsCeiling),
                                             ceilingMilliseconds: dnsCeiling)
                : dnsCeiling,
            cachedAnswers: cached, probesByFamily: byFamily)
    }

    private mutating func dueRounds(now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        var actions: [Action] = []
        for name in uplinks.keys.sorted() {
            var uplink = uplinks[name]!
            guard uplink.round == nil, case .probe(let families) = uplink.link else { continue }
            // A backup to verify before it takes over gets its probe now.
            if verifyTargets.contains(name) && !isFresh(uplink, now: at) && !uplink.verificationFailed {
                uplink.verifyRequested = true
                uplink.schedule.probeNow(at: at, settings: uplink.settings)
            }
            guard uplink.schedule.isDue(at: at) else { continue }
            let purpose = purpose(of: uplink, now: at)
            if purpose == .light, let answered = uplink.lastAnsweredTrafficMilliseconds,
               answered >= max(uplink.lastRoundMilliseconds ?? 0, uplink.lastSkipMilliseconds ?? 0),
               uplink.skippedLightRounds < AgentCore.maximumSkippedLightRounds {
                // Traffic that flows and is answered vouches for the uplink: no probe.
                uplink.skippedLightRounds += 1
                uplink.lastSkipMilliseconds = at
                uplink.schedule.postpone(until: at + uplink.settings.intervalMilliseconds)
                uplinks[name] = uplink
                continue
            }
            let promotion = purpose == .verify && verifyTargets.contains(name)
            if !uplink.linkTriggered && !uplink.doubt && !promotion, var budget = budgets[name],
               !budget.allowsPeriodicProbe(at: at) {
                // Budget spent: only link events probe until the day's window rolls over.
                budgets[name] = budget
                uplink.schedule.postpone(until: budget.windowEndMilliseconds ?? at + ByteBudget.dayMilliseconds)
                uplinks[name] = uplink
                continue
            }
            if purpose == .light { uplink.skippedLightRounds = 0 }
            uplink.verifyRequested = false
            uplink.linkTriggered = false
            lastGeneration += 1
            let plan = plan(for: &uplink, purpose: purpose, families: families, now: at)
            uplink.round = (lastGeneration, purpose,
                            plan.timeoutMilliseconds < uplink.settings.timeoutMilliseconds
                                || plan.dnsTimeoutMilliseconds < configuration.dns.timeoutMilliseconds)
            uplink.ceilingsNext = false
            uplinks[name] = uplink
            actions.append(.startRound(plan, generation: lastGeneration))
        }
        return actions
    }

    private mutating func reselectPrimary(now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        latestMilliseconds = max(latestMilliseconds, at)
        let previous = selector.primary
        let previousFamilies = familyPrimaries
        var notes: [String] = []
        for name in dampings.keys.sorted() where dampings[name]!.update(at: at, settings: policy.damping) {
            notes.append("\(name): flap damping penalty down to \(policy.damping.reuseLimit): no longer suppressed")
        }
        let candidates = uplinks.values.map { candidate(for: $0, now: at) }
        let overallChanged = selector.select(from: candidates, policy: policy, now: at)
        var familyReason: PrimaryChangeReason?
        for family in AddressFamily.allCases {
            let familyCandidates = uplinks.values.compactMap { uplink -> PrimarySelector.Candidate? in
                guard let verdict = uplink.machine.families[family]?.verdict else { return nil }
                var candidate = candidate(for: uplink, now: at)
                // The uplink's own verdict, with its hysteresis, decides whether it is
                // online at all; a family drops out on its own only while another
                // family carries the uplink (its IPv6 broken, its IPv4 fine). When
                // every family fails at once the uplink is in doubt as a whole, and
                // all its families leave together with it.
                let anotherFamilyWorks = uplink.machine.families.contains { $0.key != family && $0.value.verdict == .online }
                if verdict != .online && anotherFamilyWorks { candidate.verdict = verdict }
                return candidate
            }
            if familySelectors[family]!.select(from: familyCandidates, policy: policy, now: at) {
                familyReason = familyReason ?? familySelectors[family]!.changeReason
            }
        }
        let changed = overallChanged || familyReason != nil
        // An uplink waiting out its hold-down proves itself with a light round every
        // couple of seconds, so a link that keeps dropping out is caught before it
        // takes over again rather than after.
        for name in Set(([selector] + familySelectors.values).flatMap(\.heldDown)).sorted() {
            guard var uplink = uplinks[name], uplink.round == nil, let due = uplink.schedule.nextDueMilliseconds else { continue }
            let proving = (uplink.lastRoundMilliseconds ?? at) + provingIntervalMilliseconds(uplink.settings)
            if proving < due {
                uplink.schedule.postpone(until: max(at, proving))
                uplinks[name] = uplink
            }
        }
        guard changed else { return notes.map(Action.note) }
        if overallChanged, let primary = selector.primary {
            // A new primary starts with a fresh view of its traffic.
            uplinks[primary]?.traffic = TrafficMonitor()
            uplinks[primary]?.lastAnsweredTrafficMilliseconds = nil
        }
        for name in selector.passedOverSuppressed {
            notes.append("\(name): passed over for primary: suppressed by flap damping")
        }
        // The event describes the new primary, or the old one when none is left (it may
        // have vanished altogether).
        guard let subjectName = selector.primary ?? previous else { return notes.map(Action.note) }
        let subject = uplinks[subjectName]
        let assessment = subject?.machine.assessment ?? Assessment(.down, reason: .noSuchInterface)
        var event = HookEvent(kind: .primary, interface: subjectName, interfaceKind: subject?.kind ?? .other,
                              verdict: assessment.verdict, previousVerdict: assessment.verdict,
                              reason: assessment.reason, portalURL: assessment.portalURL,
                              primary: selector.primary, previousPrimary: previous, wallSeconds: now.wallSeconds)
        event.primaryReason = overallChanged ? selector.changeReason : familyReason
        event.quality = subject?.figures
        event.network = subject?.network ?? UplinkNetwork()
        event.session = subject?.session ?? CaptivePortalSession()
        event.familyPrimaries = familyPrimaries
        event.previousFamilyPrimaries = previousFamilies
        event.routing = policy.routing
        // The uplink given up: its addresses as last seen, for flushing its NATed
        // connections after the addresses themselves are gone.
        func lastAddresses(of name: InterfaceName) -> [IPAddress] {
            uplinks[name]?.lastAddresses ?? (vanishedPrimary?.name == name ? vanishedPrimary!.addresses : [])
        }
        if let previous { event.previousAddresses = lastAddresses(of: previous) }
        for family in AddressFamily.allCases {
            guard let given = previousFamilies[family], given != familyPrimaries[family] else { continue }
            event.previousFamilyAddresses[family] = lastAddresses(of: given).filter { $0.family == family }
        }
        return [.runHook(event)] + notes.map(Action.note)
    }

    /// How the selector sees an uplink now.
    private func candidate(for uplink: Uplink, now at: Int) -> PrimarySelector.Candidate {
        let damping = dampings[uplink.name] ?? FlapDamping()
        let thresholds = policy.quality
        let settled = at - uplink.qualitySinceMilliseconds >= policy.degradedForMilliseconds
        let figures = uplink.figures
        let clear = (figures?.lossPercent ?? 0) * 2 < thresholds.lossPercent
            && (figures?.roundTripMilliseconds ?? 0) * 2 < thresholds.roundTripMilliseconds
        var candidate = PrimarySelector.Candidate(
            name: uplink.name, kind: uplink.kind, verdict: uplink.machine.verdict,
            onlineSinceMilliseconds: max(uplink.machine.since.monotonicMilliseconds, damping.releasedMilliseconds ?? Int.min,
                                         uplink.degraded ? Int.min : uplink.qualitySinceMilliseconds,
                                         uplink.holdDownRestartMilliseconds ?? Int.min),
            // Held down as well: an uplink back from suppression, or healthy again
            // after a degradation (even one online since start-up).
            recovered: uplink.machine.previousVerdict != .unknown || damping.releasedMilliseconds != nil
                || uplink.qualitySinceMilliseconds > uplink.machine.since.monotonicMilliseconds,
            fresh: isFresh(uplink, now: at), excluded: uplink.verificationFailed)
        candidate.suppressed = damping.suppressed
        candidate.degraded = uplink.degraded && settled
        candidate.degradedNow = uplink.degraded
        candidate.healthy = !uplink.degraded && settled && clear
        candidate.metered = uplink.metered
        return candidate
    }

    /// Between the light rounds of an uplink waiting out its hold-down.
    private func provingIntervalMilliseconds(_ settings: ProbingSettings) -> Int {
        min(settings.intervalMilliseconds, max(settings.suspectIntervalMilliseconds, policy.holdDownMilliseconds / 15))
    }

    private func verdictEvent(_ uplink: Uplink, previous: Verdict, now: Instant) -> HookEvent {
        let assessment = uplink.machine.assessment
        var event = HookEvent(kind: .verdict, interface: uplink.name, interfaceKind: uplink.kind,
                              verdict: assessment.verdict, previousVerdict: previous, reason: assessment.reason,
                              portalURL: assessment.verdict == .captive ? assessment.portalURL : nil,
                              primary: selector.primary, previousPrimary: selector.primary, wallSeconds: now.wallSeconds)
        event.portalIsWISPrLogin = assessment.verdict == .captive && assessment.portalIsWISPrLogin
        event.quality = uplink.figures
        event.network = uplink.network
        event.session = uplink.session ?? CaptivePortalSession()
        event.familyPrimaries = familyPrimaries
        event.previousFamilyPrimaries = familyPrimaries
        event.previousAddresses = uplink.lastAddresses
        event.routing = policy.routing
        return event
    }

    /// The last event, when the agent stops: it describes the primary (hooks may undo
    /// what they did for it), and names no interface when there was none.
    public func stopEvent(now: Instant) -> HookEvent {
        let primary = selector.primary
        let uplink = primary.flatMap { uplinks[$0] }
        let assessment = uplink?.machine.assessment ?? Assessment(.unknown, reason: .stopping)
        var event = HookEvent(kind: .stop, interface: primary, interfaceKind: uplink?.kind ?? .other,
                              verdict: assessment.verdict, previousVerdict: assessment.verdict,
                              reason: assessment.reason, portalURL: nil,
                              primary: nil, previousPrimary: primary, wallSeconds: now.wallSeconds)
        event.quality = uplink?.figures
        event.network = uplink?.network ?? UplinkNetwork()
        event.previousFamilyPrimaries = familyPrimaries
        event.previousAddresses = uplink?.lastAddresses ?? []
        event.routing = policy.routing
        return event
    }

    /// Hooks make the routes match the primaries again: uplinkd's routing entries
    /// changed behind its back. Described as a primary event whose primaries did not
    /// change (the primary, or no interface when there is none).
    public func repairEvent(now: Instant) -> HookEvent {
        let primary = selector.primary
        let uplink = primary.flatMap { uplinks[$0] }
        let assessment = uplink?.machine.assessment ?? Assessment(.unknown, reason: .noSuchInterface)
        var event = HookEvent(kind: .repair, interface: primary, interfaceKind: uplink?.kind ?? .other,
                              verdict: assessment.verdict, previousVerdict: assessment.verdict,
                              reason: assessment.reason, portalURL: assessment.portalURL,
                              primary: primary, previousPrimary: primary, wallSeconds: now.wallSeconds)
        event.quality = uplink?.figures
        event.network = uplink?.network ?? UplinkNetwork()
        event.familyPrimaries = familyPrimaries
        event.previousFamilyPrimaries = familyPrimaries
        event.routing = policy.routing
        return event
    }
}
