/// Starting rounds (which uplink, what purpose, what limits) and taking in what they
/// found: each purpose has its own finish, and only a full round decides a verdict.
extension AgentCore {
    // MARK: starting rounds

    mutating func dueRounds(now: Instant) -> [Action] {
        var actions: [Action] = []
        for name in uplinks.keys.sorted() {
            guard var uplink = uplinks[name], uplink.round.isIdle, case .probe(let families) = uplink.link else { continue }
            if let action = startRoundIfDue(&uplink, families: families, now: now) { actions.append(action) }
            uplinks[name] = uplink
        }
        return actions
    }

    /// While the site has no primary, an uplink that could carry traffic is looked at
    /// again at most this long after its last round, metered or not: the site's way
    /// out must not wait for a schedule made to spare a backup's bytes (a metered
    /// uplink's recheck is 20 minutes). A round on a dead path sends little (SYNs and
    /// DNS queries); Tests/bench/README.md says what an hour without a primary costs.
    package static let noPrimaryRecheckMilliseconds = 5_000

    /// When an uplink's next round is due: its schedule's time, or without a primary,
    /// for one that is not online, at most `noPrimaryRecheckMilliseconds` after its
    /// last round (its schedule is left as it is, for when a primary is back).
    func nextDueMilliseconds(_ uplink: Uplink) -> Int? {
        guard selector.primary == nil, !uplink.isOnline, case .probe = uplink.link else { return uplink.schedule.nextDueMilliseconds }
        let cap = (uplink.lastRoundMilliseconds ?? latestMilliseconds) + AgentCore.noPrimaryRecheckMilliseconds
        return min(uplink.schedule.nextDueMilliseconds ?? cap, cap)
    }

    private mutating func startRoundIfDue(_ uplink: inout Uplink, families: [AddressFamily], now: Instant) -> Action? {
        let at = now.monotonicMilliseconds
        let toVerify = verifyTargets.contains(uplink.name)
        // A backup to verify before it takes over gets its probe now.
        if toVerify && !isFresh(uplink, now: now) && uplink.verification != .failed {
            uplink.verification = .wanted
            uplink.schedule.probeNow(at: at, settings: uplink.settings)
        }
        // A cold backup waits without a periodic round (`AgentCore+Standby.swift`).
        guard let due = nextDueMilliseconds(uplink), due <= at, !isResting(uplink) else { return nil }
        let purpose = purpose(of: uplink, now: now)
        if purpose == .light && uplink.traffic.vouchesForLightRound(lastRoundMilliseconds: uplink.lastRoundMilliseconds) {
            // Traffic that flows and is answered vouches for the uplink: no probe.
            uplink.traffic.skippedLightRound(at: now)
            uplink.schedule.postpone(until: at + uplink.settings.intervalMilliseconds)
            uplink.scheduleLivenessCheck(now: now)
            return nil
        }
        if purpose == .liveness && uplink.traffic.vouchesForLiveness(lastRoundMilliseconds: uplink.lastRoundMilliseconds) {
            uplink.schedule.postpone(until: (uplink.lastExchangeMilliseconds ?? at) + uplink.settings.intervalMilliseconds)
            uplink.scheduleLivenessCheck(now: now)
            return nil
        }
        // A doubt, or a promotion, is settled whatever the budget; periodic rounds wait
        // for the next window once it is spent.
        // Without a primary the site's way out is sought whatever the budget too.
        if uplink.doubt == nil && !(purpose == .verify && toVerify) && selector.primary != nil, var budget = budgets[uplink.name],
           !budget.allowsPeriodicProbe(at: at) {
            budgets[uplink.name] = budget
            uplink.schedule.postpone(until: budget.windowEndMilliseconds ?? at + ByteBudget.dayMilliseconds)
            return nil
        }
        if purpose == .light { uplink.traffic.lightRoundStarted() }
        if uplink.verification == .wanted { uplink.verification = .none }
        lastGeneration += 1
        let plan = plan(for: &uplink, purpose: purpose, families: families, now: now)
        uplink.round = .running(RoundInFlight(generation: lastGeneration, purpose: purpose,
                                              exchangeLimitMilliseconds: plan.timeoutMilliseconds))
        return .startRound(plan, generation: lastGeneration)
    }

    /// Backups to verify before they take over, overall or in one family.
    var verifyTargets: Set<InterfaceName> {
        Set(([selector] + familySelectors.values).compactMap(\.toVerify))
    }

    func isFresh(_ uplink: Uplink, now: Instant) -> Bool {
        guard let validated = uplink.lastValidatedMilliseconds else { return false }
        return now.monotonicMilliseconds - validated <= policy.verifyAgeMilliseconds
    }

    /// What kind of round an uplink gets now.
    private func purpose(of uplink: Uplink, now: Instant) -> RoundPurpose {
        if uplink.doubt != nil || !uplink.isOnline || uplink.machine.isSuspect { return .full }
        if let recheck = uplink.session?.recheckMilliseconds, now.monotonicMilliseconds >= recheck { return .full }
        if uplink.verification == .wanted && !isFresh(uplink, now: now) { return .verify }
        // Between light rounds, a bare handshake, except while waiting out a hold-down
        // (those rounds are its proof).
        if uplink.settings.livenessIntervalMilliseconds != nil, let last = uplink.lastExchangeMilliseconds,
           now.monotonicMilliseconds - last < uplink.settings.intervalMilliseconds,
           !([selector] + familySelectors.values).contains(where: { $0.heldDown.contains(uplink.name) }) {
            return .liveness
        }
        return .light
    }

    private func plan(for uplink: inout Uplink, purpose: RoundPurpose, families: [AddressFamily], now: Instant) -> RoundPlan {
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
            cached = purpose == .liveness ? uplink.answers.lastKnown() : uplink.answers.answers(at: now.monotonicMilliseconds)
        }
        // Rounds on an online uplink use what was learned of it; any other round
        // (start-up, a link that just changed, recovery, a second look at a slow one)
        // the configured ceilings. A full round confirming that the uplink passes
        // nothing goes below the usual floor when its round trips allow: a dead path is
        // told in a few of them, and a slow but live one earns a second look.
        let learned = uplink.usesLearnedLimits(policy.quality)
        // A liveness round gives up as early: its failure only starts a full round,
        // and the time it waits is most of an idle primary's detection time.
        let confirming = (purpose == .full && uplink.doubt?.confirmsFailure == true) || purpose == .liveness
        // While new connections already avoid the primary in doubt (pinned flows), the
        // confirmation costs no connection however long it waits: it waits as long as
        // a path whose round trip stepped up would take to answer, so a slow path is
        // not called dead (and its open connections released).
        let patient = purpose == .full && uplink.doubt?.confirmsFailure == true
            && flowPlan(now: now)?.provisional == uplink.name
        let confirmationFloor = patient ? AgentCore.patientConfirmationFloorMilliseconds : AgentCore.confirmationFloorMilliseconds
        let exchangeFloor = confirming ? confirmationFloor : AgentCore.exchangeFloorMilliseconds
        let lookupFloor = confirming ? confirmationFloor : AgentCore.lookupFloorMilliseconds
        let dnsCeiling = configuration.dns.timeoutMilliseconds
        return RoundPlan(
            interface: uplink.name, index: uplink.index, kind: uplink.kind, link: .probe(families), purpose: purpose,
            probes: all, thresholdPercent: uplink.settings.successThresholdPercent,
            timeoutMilliseconds: learned
                ? uplink.exchangeTimes.timeout(floorMilliseconds: exchangeFloor,
                                               ceilingMilliseconds: uplink.settings.timeoutMilliseconds)
                : uplink.settings.timeoutMilliseconds,
            dnsTimeoutMilliseconds: learned
                ? uplink.lookupTimes.timeout(floorMilliseconds: min(lookupFloor, dnsCeiling),
                                             ceilingMilliseconds: dnsCeiling)
                : dnsCeiling,
            cachedAnswers: cached, probesByFamily: byFamily, configuration: configuration)
    }

    /// A full round is owed by `uplink`; when the reason is evidence against the
    /// primary, the backup that would take over is verified meanwhile.
    mutating func requestFullRound(_ uplink: inout Uplink, _ reason: FullRoundReason, now: Instant) {
        uplink.requestFullRound(reason, now: now)
        if reason.suspectsUplink && uplink.name == selector.primary {
            verifySuccessor(of: uplink.name, coldToo: reason.wakesColdBackups, now: now)
        }
    }

    /// Starts verifying the uplink that would take over from `primary` if it failed,
    /// unless it is fresh or busy: the verification then runs beside the primary's
    /// confirmation instead of after it. A cold successor is left alone unless
    /// `coldToo`: weak evidence (one unanswered packet) must not make the metered
    /// backup pay for each of its false alarms; its promotion is verified all the same.
    private mutating func verifySuccessor(of primary: InterfaceName, coldToo: Bool, now: Instant) {
        let at = now.monotonicMilliseconds
        let policy = self.policy
        let rank = { (uplink: Uplink) in policy.rank(of: uplink.name, kind: uplink.kind) }
        let successor = uplinks.values
            .filter { $0.name != primary && $0.isOnline && $0.verification != .failed }
            .min { (rank($0), $0.name) < (rank($1), $1.name) }
        guard var backup = successor, backup.round.isIdle, !isFresh(backup, now: now) else { return }
        if !coldToo && backup.settings.metering.standby == .cold { return }
        // At most once per the backup's own interval, and never over its budget: a
        // metered backup must not pay for every doubt of the primary (the promotion
        // itself is still verified, whatever the budget).
        if let last = backup.lastPreverifyMilliseconds, at - last < backup.settings.intervalMilliseconds { return }
        if var budget = budgets[backup.name], !budget.allowsPeriodicProbe(at: at) {
            budgets[backup.name] = budget
            return
        }
        backup.lastPreverifyMilliseconds = at
        backup.verification = .wanted
        backup.schedule.probeNow(at: at, settings: backup.settings)
        uplinks[backup.name] = backup
    }

    // MARK: finished rounds

    /// A probe round finished. Results of a stale generation only count their bytes.
    package mutating func roundFinished(_ report: RoundReport, generation: Int, now: Instant) -> [Action] {
        let at = now.monotonicMilliseconds
        // Bytes were spent whatever became of the uplink.
        budgets[report.interface, default: ByteBudget(limitBytes: nil)].record(report.totalBytes, at: at)
        guard var uplink = uplinks[report.interface], let round = uplink.round.inFlight, round.generation == generation else {
            return dueRounds(now: now)
        }
        let rerun = uplink.roundEnded()
        uplink.lastRoundMilliseconds = at
        if round.purpose != .liveness { uplink.lastExchangeMilliseconds = at }
        if let dns = report.dns {
            uplink.dnsSource = dns.source
            uplink.network.dnsServers = dns.addresses
        }
        learn(from: report, into: &uplink, now: now)
        // A round that brings a failed uplink back saw the outage's end (SYNs lost to the
        // cut, answered on their retransmission): not the link's quality, which would
        // then read lossy and keep the ceilings, so that a second cut is found late.
        let cameBack = !uplink.isOnline && uplink.machine.assessment.verdict != .unknown
        var actions: [Action] = []
        switch round.purpose {
        case .light, .liveness:
            lightRoundFinished(report, &uplink, failure: round.purpose == .light ? .lightRoundFailed : .livenessFailed, now: now)
        case .verify:
            verifyRoundFinished(report, &uplink, now: now)
        case .full:
            uplink.session = CaptivePortalSession(report.captivePortal?.status, now: now)
            actions = fullRoundFinished(report, &uplink, now: now)
        }
        let families = uplink.machine.families
        let timed = report.probes.map { probe in
            var probe = probe
            probe.exchangeLimitMilliseconds = round.exchangeLimitMilliseconds
            return probe
        }
        uplink.quality.roundFinished(timed, online: uplink.isOnline && !cameBack, settled: uplink.isSettledOnline,
                                     thresholds: policy.quality, onlineFamilies: { families[$0]?.verdict == .online }, at: now)
        if let rerun { uplink.requestFullRound(rerun, now: now) }
        // The session's end is near: a full round (the one that asks the API) by then.
        if let recheck = uplink.session?.recheckMilliseconds, recheck < uplink.schedule.nextDueMilliseconds ?? Int.max {
            uplink.schedule.postpone(until: recheck)
        }
        uplinks[report.interface] = uplink
        return actions + reselectPrimary(now: now) + climbLadders(now: now) + dueRounds(now: now)
    }

    /// Held when every family the last full round found online still is (an uplink
    /// online over IPv4 with broken IPv6 keeps failing IPv6 quietly); a family that was
    /// not online and validated needs a full round to say it is back (and to give it
    /// its primary role again).
    private mutating func lightRoundFinished(_ report: RoundReport, _ uplink: inout Uplink, failure: FullRoundReason,
                                             now: Instant) {
        let families = uplink.machine.families
        let online = AddressFamily.allCases.filter { families[$0]?.verdict == .online }
        let held = report.assessment.verdict == .online && online.allSatisfy { report.families[$0]?.verdict == .online }
        let familyBack = AddressFamily.allCases.contains { family in
            families[family].map { $0.verdict != .online } == true && report.families[family]?.verdict == .online
        }
        // The light round a metered primary's lone-packet alarm asked for settles it.
        if uplink.traffic.lightCheckPending {
            uplink.traffic.lightCheckPending = false
            uplink.traffic.alarmSettled(validated: held, at: now)
        }
        if held {
            uplink.lastValidatedMilliseconds = now.monotonicMilliseconds
            uplink.schedule.roundFinished(at: now.monotonicMilliseconds, suspect: false, online: true, settings: uplink.settings)
            if let last = uplink.lastExchangeMilliseconds, uplink.schedule.nextDueMilliseconds != nil {
                // A liveness round leaves the light round where it was.
                uplink.schedule.postpone(until: last + uplink.settings.intervalMilliseconds)
            }
            uplink.scheduleLivenessCheck(now: now)
            if familyBack { requestFullRound(&uplink, .familyBack, now: now) }
        } else {
            uplink.answers.clear()
            if selector.heldDown.contains(uplink.name) { uplink.holdDownRestartMilliseconds = now.monotonicMilliseconds }
            requestFullRound(&uplink, failure, now: now)
        }
    }

    private mutating func verifyRoundFinished(_ report: RoundReport, _ uplink: inout Uplink, now: Instant) {
        guard report.assessment.verdict == .online else {
            uplink.verification = .failed
            uplink.answers.clear()
            requestFullRound(&uplink, .verificationFailed, now: now)
            return
        }
        uplink.lastValidatedMilliseconds = now.monotonicMilliseconds
        uplink.verification = .none
        if uplink.doubt == nil {
            uplink.schedule.roundFinished(at: now.monotonicMilliseconds, suspect: false, online: uplink.isOnline,
                                          settings: uplink.settings)
        }
    }

    /// The only round that may change a verdict; a failed one that shows life first
    /// earns another look at the ceilings (`SecondLook`), counting what validated so far.
    private mutating func fullRoundFinished(_ report: RoundReport, _ uplink: inout Uplink, now: Instant) -> [Action] {
        let looked = uplink.looks.map {
            SecondLook.merged($0.merged, report, thresholdPercent: uplink.settings.successThresholdPercent)
        } ?? report
        let lookCount = uplink.looks?.count ?? 0
        if report.assessment.verdict != .online && uplink.isOnline && lookCount < SecondLook.maximumLooks
            && SecondLook.showsLife(looked) {
            // Packets get through, not enough of them in time (a lossy, loaded or slow
            // link, not a dead one): look again before deciding.
            uplink.looks = LooksSoFar(merged: looked, count: lookCount + 1)
            uplink.schedule.probeNow(at: now.monotonicMilliseconds, settings: uplink.settings)
            return []
        }
        let validated = looked.assessment.verdict == .online
        let settlesAlarm = uplink.doubt == .stallAlarm || uplink.doubt == .lonePacket
        uplink.doubtSettled()
        var actions: [Action] = []
        let previous = uplink.machine.verdict
        if uplink.machine.roundFinished(looked.assessment, families: looked.families, settings: uplink.settings, now: now) {
            actions = verdictChanged(&uplink, from: previous, now: now)
        }
        if validated {
            uplink.lastValidatedMilliseconds = now.monotonicMilliseconds
            uplink.verification = .none
            // An endpoint that failed while the quorum validated is blocked or
            // allow-listed: light rounds leave it out until it validates again.
            uplink.sidelined = Set(looked.probes.filter { $0.judgement != .valid }
                .map { SidelinedProbe(name: $0.name, family: $0.family) })
        } else {
            uplink.answers.clear()
        }
        if settlesAlarm { uplink.traffic.alarmSettled(validated: validated, at: now) }
        if case .probe = uplink.link {
            uplink.schedule.roundFinished(at: now.monotonicMilliseconds, suspect: uplink.machine.isSuspect,
                                          online: uplink.isOnline, settings: uplink.settings)
            uplink.scheduleLivenessCheck(now: now)
        }
        return actions
    }

    /// Round-trip times, DNS answers worth keeping, from a finished round.
    private func learn(from report: RoundReport, into uplink: inout Uplink, now: Instant) {
        for probe in report.probes where probe.judgement == .valid {
            // A bare handshake is no HTTP exchange: its time would shorten the limits.
            // One whose first SYN went unanswered waited out the retransmission (Karn's
            // rule): a round that validated while a cut path came back would otherwise
            // stretch the limits to seconds, and a second cut soon after is found that late.
            let retransmitted = HandshakeSample(probe).map { $0.answered == 0 } ?? false
            if report.purpose != .liveness && !retransmitted {
                uplink.exchangeTimes.add(sampleMilliseconds: probe.exchangeMilliseconds)
            }
            if let lookup = probe.dnsMilliseconds { uplink.lookupTimes.add(sampleMilliseconds: lookup) }
            if let host = probe.host, let ttl = probe.dnsTTLSeconds, let bounds = configuration.dns.answerReuseMilliseconds {
                uplink.answers.store(probe.addresses, for: DNSAnswerCache.Key(host: host, family: probe.family),
                                     ttlSeconds: ttl, at: now.monotonicMilliseconds, bounds: bounds)
            }
        }
    }
}
