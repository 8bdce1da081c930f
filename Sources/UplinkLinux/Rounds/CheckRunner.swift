import UplinkCore

/// Runs `uplinkd check`: reads link facts once, then runs one round per named
/// interface, all in parallel on one loop, with the same round runner as the agent.
package final class CheckRunner {
    package let configuration: Configuration
    package let kindReader: KindReading

    package init(configuration: Configuration, kindReader: KindReading = SysfsKindReader()) {
        self.configuration = configuration
        self.kindReader = kindReader
    }

    package func run(_ interfaces: [InterfaceName]) throws(AdapterError) -> [RoundReport] {
        let loop: EventLoop
        do { loop = try EventLoop() } catch { throw .system(error) }
        let started = loop.nowMilliseconds
        let snapshot: NetlinkSnapshot
        let prober: HTTPProber
        do { snapshot = try NetlinkSnapshot() } catch { throw .netlink(error) }
        let files = HostNetworkFiles()
        let kinds = interfaces.map { kindReader.kind(of: $0, configured: configuration.configuredKind(of: $0)) }
        let tlsDue = zip(interfaces, kinds).contains { name, kind in
            let facts = snapshot.facts(for: name)
            return needsTLS(RoundPlan.check(configuration, interface: name, index: facts?.index ?? 0, kind: kind,
                                            link: LinkEvaluator.evaluate(facts)), files: files)
        }
        do { prober = try HTTPProber(loop: loop, tls: tlsDue ? .available : .notNeeded) } catch { throw .curl(error) }
        let rounds = RoundRunner(loop: loop, prober: prober, resolver: DNSResolver(loop: loop), files: files,
                                 validator: ValidatorRunner(loop: loop))

        var reports: [RoundReport?] = Array(repeating: nil, count: interfaces.count)
        let startRounds = { [self] (modems: [ModemFacts]) in
            for (position, name) in interfaces.enumerated() {
                let facts = snapshot.facts(for: name)
                let modem = ModemFacts.carrying(name, binding: configuration.interfaces[name]?.modem, among: modems)
                var link = LinkEvaluator.evaluate(facts)
                // The modem's word costs no probe byte: a modem that cannot carry data is down.
                if case .probe = link, let modem, let reason = ModemEvidence.cannotCarryData(modem) { link = .down(reason: reason) }
                let plan = RoundPlan.check(configuration, interface: name, index: facts?.index ?? 0, kind: kinds[position],
                                           link: link)
                look(plan, rounds: rounds, started: started, earlier: nil, looks: 0) { report in
                    var report = report
                    report.modem = modem.map { ModemStatus($0) }
                    reports[position] = report
                }
            }
        }
        // ModemManager is asked only about cellular uplinks (and those tied to a modem).
        let cellular = zip(interfaces, kinds).contains { name, kind in
            configuration.agent.modems.wantsModem(kind: kind, binding: configuration.interfaces[name]?.modem)
        }
        if cellular {
            ModemSnapshot.take(loop: loop, completion: startRounds)
        } else {
            startRounds([])
        }
        do { try loop.run() } catch { throw .system(error) }
        // The loop returns only when nothing is in flight, so every report is there.
        return reports.compactMap { $0 }
    }

    /// Whether a round of `plan` may speak TLS: an https probe in a family it probes,
    /// or the captive-portal API the round runner will ask (https only). A modem's
    /// word found later can only take a round away.
    private func needsTLS(_ plan: RoundPlan, files: NetworkFileReading) -> Bool {
        guard case .probe(let families) = plan.link else { return false }
        if families.contains(where: { family in plan.probes(for: family).contains { $0.url.scheme == .https } }) {
            return true
        }
        return configuration.useCaptivePortalAPI
            && files.captivePortalAPI(for: plan.interface, index: plan.index, settings: configuration.dns) != nil
    }

    /// One round, and another while a failed one shows life (see `SecondLook`): a
    /// lossy uplink is judged on what validated in any of its looks.
    private func look(_ plan: RoundPlan, rounds: RoundRunner, started: Int, earlier: RoundReport?, looks: Int,
                      completion: @escaping (RoundReport) -> Void) {
        rounds.run(plan, startedMilliseconds: started) { [self] report in
            let merged = earlier.map { SecondLook.merged($0, report, thresholdPercent: plan.thresholdPercent) } ?? report
            guard looks < SecondLook.maximumLooks, SecondLook.showsLife(merged) else {
                var final = merged
                // Merging added up the looks' times; the check took from start to now.
                final.elapsedMilliseconds = report.elapsedMilliseconds
                return completion(final)
            }
            Log.info("\(plan.interface): \(merged.assessment.verdict.rawValue) (\(merged.assessment.reason.rawValue)) but packets get through: looking again")
            look(plan, rounds: rounds, started: started, earlier: merged, looks: looks + 1, completion: completion)
        }
    }
}
