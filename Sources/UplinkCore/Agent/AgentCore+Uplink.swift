extension AgentCore {
    /// One uplink as the agent core keeps it: what it is, its verdict and its probing
    /// (the round state machine), and what was learned of it. The transitions that
    /// concern it alone live here; those that weigh uplinks against each other
    /// (budgets, damping, the primary, verifying a successor) live in `AgentCore`.
    struct Uplink: Sendable {
        // What it is.
        /// As the kernel showed it last (the modem's word is weighed against it again
        /// when ModemManager speaks).
        var observed: ObservedUplink
        var name: InterfaceName
        var index: Int
        var kind: InterfaceKind
        var link: LinkEvaluator.Result
        var metered: Bool
        var leaseSaysMetered: Bool
        var settings: ProbingSettings

        // Its verdict and its probing.
        var machine: VerdictMachine
        var schedule: ProbeSchedule
        var round = RoundState.idle
        /// Why a full round is owed, if one is: it is in doubt until a full round decides.
        var doubt: FullRoundReason?
        var verification = Verification.none
        /// A doubt looked at more than once: the looks so far (the next one uses the
        /// configured ceilings).
        var looks: LooksSoFar?
        /// When a round last validated (light, verification or full).
        var lastValidatedMilliseconds: Int?
        /// When the last round of any purpose finished.
        var lastRoundMilliseconds: Int?
        /// When the last round with HTTP exchanges (not a liveness round) finished.
        var lastExchangeMilliseconds: Int?
        /// When it was last verified because the primary fell in doubt.
        var lastPreverifyMilliseconds: Int?
        /// When a probe failed while it waited out its hold-down: the hold-down starts
        /// again from there (it must answer every probe of it).
        var holdDownRestartMilliseconds: Int?
        /// Next probe of the set for a light round, per family.
        var lightRotation: [AddressFamily: Int] = [:]
        /// Probes that failed over a family while their full round validated (blocked
        /// or allow-listed endpoints, names without an AAAA record): light rounds skip
        /// them in that family until they validate again.
        var sidelined: Set<SidelinedProbe> = []

        // What was learned of it.
        /// Its addresses and gateways as last observed, and the last round's servers.
        var network = UplinkNetwork()
        /// Its usable addresses when it last had any: what its NATed connections used.
        var lastAddresses: [IPAddress] = []
        /// Where the last round found its DNS servers.
        var dnsSource: DNSSource?
        /// The session the captive-portal API told of in the last full round.
        var session: CaptivePortalSession?
        var exchangeTimes = RoundTripEstimator()
        var lookupTimes = RoundTripEstimator()
        var answers = DNSAnswerCache()
        var traffic = TrafficEvidence()
        var quality = QualityTrack()

        init(observed: ObservedUplink, link: LinkEvaluator.Result, metered: Bool, settings: ProbingSettings, now: Instant) {
            self.observed = observed
            name = observed.facts.name
            index = observed.facts.index
            kind = observed.kind
            self.link = link
            self.metered = metered
            leaseSaysMetered = observed.leaseSaysMetered
            self.settings = settings
            machine = VerdictMachine(now: now)
            schedule = ProbeSchedule(settings: settings)
        }

        var isOnline: Bool { machine.verdict == .online }

        /// The figures of its best online family (IPv4 first), else of any family.
        var figures: QualityFigures? {
            quality.figures { machine.families[$0]?.verdict == .online }
        }

        /// Losing enough packets that rounds are not hurried: they get the ceilings.
        func isLossy(_ thresholds: QualityThresholds) -> Bool {
            (figures?.lossPercent ?? 0) * 2 >= thresholds.lossPercent
        }

        /// Rounds use what was learned of the uplink only while it is online and nothing
        /// argues for the ceilings (a second look, heavy loss).
        func usesLearnedLimits(_ thresholds: QualityThresholds) -> Bool {
            isOnline && looks == nil && !isLossy(thresholds)
        }

        /// Its quality counts only once it is settled online: no doubt, no look pending,
        /// no verdict change pending.
        var isSettledOnline: Bool {
            isOnline && doubt == nil && looks == nil && !machine.isSuspect
        }

        /// The link changed under the uplink: what was learned of it (DNS answers,
        /// round-trip times, earlier looks of a doubt) may no longer hold.
        mutating func forgetWhatWasLearned() {
            looks = nil
            quality.dropPending()
            answers.clear()
            exchangeTimes.reset()
            lookupTimes.reset()
        }

        /// The link went down: no probing until it is back, no doubt or request left,
        /// and nothing measured before says anything of it then.
        mutating func linkWentDown() {
            schedule.stop()
            round = .idle
            doubt = nil
            if verification == .wanted { verification = .none }
            quality.linkWentDown()
            forgetWhatWasLearned()
        }

        /// The link changed in a way that can change the answer: whatever round runs
        /// saw the old link, and the next one decides afresh.
        mutating func linkChanged(now: Instant) {
            forgetWhatWasLearned()
            round = .idle
            doubt = doubt ?? .linkChanged
            schedule.probeNow(at: now.monotonicMilliseconds, settings: settings)
        }

        /// A recovery step changed the path under the uplink: the round in flight saw
        /// the path before it, so its answer is dropped (its bytes still count).
        mutating func recoveryStepTaken() {
            forgetWhatWasLearned()
            round = .idle
        }

        /// A full round is owed: at once when idle, else right after the running round.
        mutating func requestFullRound(_ reason: FullRoundReason, now: Instant) {
            switch round {
            case .idle:
                doubt = doubt ?? reason
                schedule.probeNow(at: now.monotonicMilliseconds, settings: settings)
            case .running(let inFlight):
                if reason.suspectsUplink { doubt = doubt ?? reason }
                round = .rerunPending(inFlight, reason)
            case .rerunPending:
                if reason.suspectsUplink { doubt = doubt ?? reason }
            }
        }

        /// The round in flight reported back: idle again. Returns the reason of a full
        /// round asked for meanwhile, owed once the report is taken in.
        mutating func roundEnded() -> FullRoundReason? {
            defer { round = .idle }
            if case .rerunPending(_, let reason) = round { return reason }
            return nil
        }

        /// After a round that leaves it online and settled: a liveness check comes
        /// before the next light round when one is due sooner.
        mutating func scheduleLivenessCheck(now: Instant) {
            guard let liveness = settings.livenessIntervalMilliseconds, isOnline, doubt == nil, !machine.isSuspect,
                  let due = schedule.nextDueMilliseconds, now.monotonicMilliseconds + liveness < due else { return }
            schedule.postpone(until: now.monotonicMilliseconds + liveness)
        }

        /// A full round decided: the doubt and its looks are settled.
        mutating func doubtSettled() {
            doubt = nil
            looks = nil
        }
    }
}
