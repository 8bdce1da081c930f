import Glibc
import UplinkCore

/// Keeps the kernel's connection routing in step with the core's flow plan
/// (`[flows] pinning = yes`): the policy rules and per-uplink tables (`ip -batch`),
/// the nftables table `inet uplinkd` (`nft -f`, one transaction), and the release of
/// an unusable uplink's connections (`conntrack -D` by mark). Each runs as a child
/// of the agent's loop, one at a time, in that order: a table exists before a mark
/// points at it. Puts its entries back when another tool removes them (a netlink
/// nftables watch; the link source's routing watch), and removes them at the stop.
final class FlowDriver {
    private unowned let agent: Agent
    /// What the kernel was last brought to: the plan, its script, its routes.
    private var applied: FlowPlan?
    private var appliedScript: String?
    private var appliedRoutes: FlowRoutes?
    /// `nft list table` right after the last change of ours: any other listing means
    /// someone else changed or removed the table.
    private var expectedListing: String?
    private var steps: [Step] = []
    private var running = false
    /// Asked to look again while a step ran.
    private var again = false
    private var checkTimer: EventLoop.TimerID?
    private var watch: NftablesWatch?
    private var repairs = RepairPace()

    init(agent: Agent) {
        self.agent = agent
    }

    private var settings: FlowSettings { agent.configuration.flows }
    private var enabled: Bool { agent.options.managesRouting && settings.pinning }
    /// The agent's flow entries are in the kernel (or being put there).
    private var active: Bool { applied != nil }

    /// One child's command line and input, and what to do with its result: its lines
    /// collected (at most 10,000), or each given to `eachLine`.
    private struct Step {
        var name: String
        var arguments: [String]
        var input: String = ""
        var done: (_ succeeded: Bool, _ output: [String]) -> Void = { _, _ in }
        var eachLine: ((String) -> Void)?
    }

    /// How often the connections pinned to each uplink are counted.
    static let countIntervalMilliseconds = 30_000
    private var countTimer: EventLoop.TimerID?

    /// Leftovers of an earlier run go first (one that pinned, crashed, and was
    /// started again without pinning too).
    func start() {
        guard agent.options.managesRouting else { return }
        removeEverything(why: "left by an earlier run")
    }

    /// After every change of the core's state: the plan may have changed, or pinning
    /// was turned on or off by a reload.
    func stateChanged() {
        guard agent.options.managesRouting, agent.isRunning else { return }
        if enabled {
            if watch == nil { startWatch() }
            if countTimer == nil { scheduleCount(afterMilliseconds: 1_000) }
            sync()
        } else if active && !running {
            applied = nil
            appliedScript = nil
            appliedRoutes = nil
            expectedListing = nil
            watch = nil
            removeEverything(why: "as pinning is off now")
        }
    }

    private func startWatch() {
        do {
            let watch = try NftablesWatch(loop: agent.loop)
            try watch.start { [unowned self] in tableMayHaveChanged() }
            self.watch = watch
        } catch {
            Log.warning("flows: cannot watch nftables for changes (\(error)); a removed table is put back only at the next change")
        }
    }

    /// The link source saw rules or routes change (ours, or someone else's).
    func routingMayHaveChanged() {
        guard enabled, agent.isRunning else { return }
        appliedRoutes = nil
        scheduleCheck(afterMilliseconds: 200)
    }

    private func tableMayHaveChanged() {
        guard enabled, agent.isRunning else { return }
        scheduleCheck(afterMilliseconds: 200)
    }

    /// One look after a burst of changes (a firewall reload changes many things).
    private func scheduleCheck(afterMilliseconds delay: Int) {
        guard checkTimer == nil else { return }
        checkTimer = agent.loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self else { return }
            checkTimer = nil
            verifyTable()
        }
    }

    /// Compares the table with what the last change left; a difference is repaired.
    private func verifyTable() {
        guard enabled, agent.isRunning, let expectedListing else { return sync() }
        enqueue(Step(name: "nft list", arguments: [FlowTools.nft, "list", "table", "inet", FlowRuleset.tableName]) { [unowned self] ok, output in
            let listing = output.joined(separator: "\n")
            guard !ok || listing != expectedListing else { return }
            let what = ok ? "changed" : "removed"
            if repairs.repairing(now: agent.loop.nowMilliseconds) {
                Log.warning("flows: nftables table inet \(FlowRuleset.tableName) \(what) behind the agent's back again (another tool fighting over it?); putting it back")
            } else {
                Log.notice("flows: nftables table inet \(FlowRuleset.tableName) \(what) behind the agent's back; putting it back")
            }
            appliedScript = nil
            sync()
        })
    }

    /// Brings the kernel to the current plan: routes, then the ruleset, then releases.
    private func sync() {
        guard !running else { again = true; return }
        guard let links = agent.links, let plan = agent.core.flowPlan(now: agent.now()) else { return }
        let routes = FlowRoutes(plan: plan, settings: settings, links: Array(links.links.values))
        if routes != appliedRoutes {
            appliedRoutes = routes
            for (family, lines) in routes.commands(from: links.routingEntries(settings.ownership)).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                enqueue(Step(name: "ip -batch", arguments: [FlowTools.ip, family.ipFlag, "-force", "-batch", "-"],
                             input: lines.joined(separator: "\n") + "\n") { ok, output in
                    if !ok { Log.error("flows: ip could not make every rule and route: \(output.joined(separator: "; "))") }
                })
            }
        }
        // Most state changes (a round, a traffic sample) leave the plan as it was.
        let script = plan == applied && appliedScript != nil ? appliedScript : FlowRuleset.script(plan)
        if let script, script != appliedScript {
            appliedScript = script
            enqueue(Step(name: "nft -f", arguments: [FlowTools.nft, "-f", "-"], input: script) { [unowned self] ok, output in
                guard ok else {
                    appliedScript = nil
                    return Log.error("flows: nft refused the ruleset: \(output.joined(separator: "; "))")
                }
                Log.info("flows: new connections \(plan.spread.isEmpty ? "follow the main table" : "go to \(plan.spreadText)")"
                         + (plan.provisional.map { " (\($0) in doubt)" } ?? ""))
            })
            enqueue(Step(name: "nft list", arguments: [FlowTools.nft, "list", "table", "inet", FlowRuleset.tableName]) { [unowned self] ok, output in
                expectedListing = ok ? output.joined(separator: "\n") : nil
            })
        }
        for member in applied.map(plan.released) ?? [] { release(member) }
        applied = plan
    }

    /// Counts the connections of each mark in conntrack, for the `pinned` facts.
    private func scheduleCount(afterMilliseconds delay: Int) {
        countTimer = agent.loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self, enabled, agent.isRunning else { return }
            var counts: [Int: Int] = [:]
            enqueue(Step(name: "conntrack -L", arguments: [FlowTools.conntrack, "-L"], done: { [unowned self] ok, _ in
                guard ok, agent.isRunning else { return }
                agent.core.flowsCounted(bySlot: counts)
                agent.perform([])
            }, eachLine: { line in
                if let slot = FlowTools.slot(ofConntrackLine: line) { counts[slot, default: 0] += 1 }
            }))
            scheduleCount(afterMilliseconds: FlowDriver.countIntervalMilliseconds)
        }
    }

    /// Deletes the conntrack entries of `member`'s mark: their next packets take the
    /// current choice at once instead of waiting on a dead uplink.
    private func release(_ member: FlowPlan.Member) {
        let mark = "\(FlowRuleset.hex(member.mark))/\(FlowRuleset.hex(FlowSettings.markMask))"
        // conntrack prints each deleted entry (with its mark), then a summary line.
        var count = 0
        enqueue(Step(name: "conntrack -D", arguments: [FlowTools.conntrack, "-D", "--mark", mark], done: { _, _ in
            Log.notice("flows: \(member.name) no longer usable: \(count) connection\(count == 1 ? "" : "s") released")
        }, eachLine: { line in
            if FlowTools.slot(ofConntrackLine: line) == member.slot { count += 1 }
        }))
    }

    private func enqueue(_ step: Step) {
        steps.append(step)
        runNext()
    }

    private func runNext() {
        guard !running, !steps.isEmpty else {
            if !running && again && agent.isRunning {
                again = false
                sync()
            }
            return
        }
        let step = steps.removeFirst()
        running = true
        var output: [String] = []
        do {
            _ = try ChildProcess(loop: agent.loop, name: step.name, arguments: step.arguments, environment: [ChildProcess.searchPath],
                                 input: Array(step.input.utf8), timeoutMilliseconds: 10_000,
                                 onLine: { line in
                                     if let eachLine = step.eachLine { eachLine(line) } else if output.count < 10_000 { output.append(line) }
                                 },
                                 completion: { [unowned self] termination in
                                     running = false
                                     step.done(termination.status == 0 && !termination.timedOut, output)
                                     runNext()
                                 })
        } catch {
            running = false
            Log.error("flows: cannot run \(step.arguments[0]): \(error)")
            step.done(false, ["\(error)"])
            runNext()
        }
    }

    /// At the stop, once the hooks ran: the table, rules and routes go, unless
    /// `keep-routes-on-stop` (pinned connections then keep their uplinks meanwhile).
    func finish() {
        for timer in [checkTimer, countTimer].compactMap({ $0 }) { agent.loop.cancel(timer) }
        checkTimer = nil
        countTimer = nil
        guard active else { return }
        watch = nil
        guard !agent.configuration.agent.routing.keepOnStop else { return }
        removeEverything(why: "at the stop")
    }

    /// The rules and routes (netlink), then the table: synchronously, at the start,
    /// the stop or when pinning was turned off.
    private func removeEverything(why: String) {
        do {
            let removed = try RoutingEntries.remove(ownedBy: settings.ownership)
            if !removed.isEmpty { Log.notice("flows: removed rules and routes \(why): \(removed.joined(separator: "; "))") }
        } catch {
            Log.error("flows: cannot remove rules and routes \(why): \(error)")
        }
        if FlowTools.tableExists {
            if FlowTools.removeTable() {
                Log.notice("flows: removed nftables table inet \(FlowRuleset.tableName) \(why)")
            } else {
                Log.error("flows: cannot remove nftables table inet \(FlowRuleset.tableName) \(why)")
            }
        }
    }
}

/// Repairs close together mean someone keeps undoing them (worth a warning).
private struct RepairPace {
    private var lastMilliseconds: Int?

    mutating func repairing(now: Int) -> Bool {
        defer { lastMilliseconds = now }
        return lastMilliseconds.map { now - $0 < RouteGuard.quietMilliseconds } ?? false
    }
}
