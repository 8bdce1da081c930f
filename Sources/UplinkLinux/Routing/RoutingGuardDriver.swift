import UplinkCore

/// Looks after uplinkd's own routing entries for a daemon agent: removes what an
/// earlier run left (SIGKILL, a crash, a power cut) at start, notices changes made
/// behind the hooks' backs and has the hooks repair them, and removes or keeps the
/// entries at the stop. Owns the core's `RouteGuard` and the repair timer; runs on the
/// agent's loop, and does nothing unless the agent manages routing.
final class RoutingGuardDriver {
    private unowned let agent: Agent
    private var routeGuard = RouteGuard()
    private var repairTimer: EventLoop.TimerID?

    init(agent: Agent) {
        self.agent = agent
    }

    private var manages: Bool { agent.options.managesRouting }
    private var settings: RoutingSettings { agent.configuration.agent.routing }

    /// Leftovers go before anything else, so the hooks start from nothing; kept
    /// entries (`keep-routes-on-stop`) stay until the hooks have a primary to give them.
    func start(_ source: LinkSource) {
        guard manages else { return }
        if !settings.keepOnStop { remove(from: source, why: "left by an earlier run") }
        source.watchRouting { [unowned self] in
            routingMayHaveChanged()
            agent.flows.routingMayHaveChanged()
        }
        // Start-up is over at the latest after ready-timeout, as for systemd.
        agent.loop.schedule(afterMilliseconds: agent.configuration.agent.readyTimeoutMilliseconds) { [weak self] in
            self?.arm()
        }
    }

    /// After every change of the state: a settled start arms the guard.
    func stateChanged(_ state: AgentState) {
        if state.isSettled && !routeGuard.armed { arm() }
    }

    /// Every hook of one event has run. The route hook acts on primary and repair
    /// events only: what it left then is what the guard keeps. A change seen after any
    /// other event (or while later hooks ran) is someone else's, and is repaired once
    /// the hooks are idle.
    func hookEventFinished(_ kind: HookEvent.Kind) {
        guard manages, agent.isRunning, let links = agent.links else { return }
        links.catchUp()
        if kind == .primary || kind == .repair {
            routeGuard.hooksCaughtUp(picture())
        } else {
            routingMayHaveChanged()
        }
    }

    /// When the stop begins: no repair is started any more.
    func stop() {
        if let repairTimer { agent.loop.cancel(repairTimer) }
        repairTimer = nil
    }

    /// At the stop, once the hooks ran: the entries go, unless `keep-routes-on-stop`.
    func finish() {
        guard manages, let links = agent.links else { return }
        if settings.keepOnStop {
            let kept = picture()
            if !kept.hasNoEntries { Log.notice("keeping uplinkd's routing entries (keep-routes-on-stop): \(kept.entryList)") }
        } else {
            remove(from: links, why: "at the stop")
        }
    }

    private func remove(from source: LinkSource, why: String) {
        do {
            let removed = try source.removeRouting(settings)
            if !removed.isEmpty { Log.notice("removed uplinkd's routing entries \(why): \(removed.joined(separator: "; "))") }
        } catch {
            Log.error("cannot remove uplinkd's routing entries \(why): \(error)")
        }
    }

    private func arm() {
        guard manages, !routeGuard.armed, agent.isRunning else { return }
        routeGuard.arm()
        routingMayHaveChanged()
    }

    private func picture() -> RoutingPicture {
        guard let links = agent.links else { return RoutingPicture() }
        let entries = links.routingEntries(settings)
        // The flow tables' copies of the uplinks' routes are the flow driver's to keep.
        let flows = agent.configuration.flows.ownership
        return RoutingPicture(settings: settings, rules: entries.rules, routes: entries.routes,
                              primaries: agent.core.familyPrimaries,
                              links: links.links.values.map { $0.withoutRoutes(ownedBy: flows) })
    }

    /// Rules, routes or the primaries' routes may differ from what the hooks left.
    private func routingMayHaveChanged() {
        // Cheap checks first: the picture takes a rule dump.
        guard manages, agent.isRunning, repairTimer == nil, routeGuard.armed, agent.adapters.hooks.pendingEvents == 0,
              let delay = routeGuard.examine(picture(), hooksIdle: true) else { return }
        repairTimer = agent.loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self else { return }
            repairTimer = nil
            guard agent.isRunning else { return }
            repairIfStillChanged()
        }
    }

    private func repairIfStillChanged() {
        let picture = picture()
        guard routeGuard.examine(picture, hooksIdle: agent.adapters.hooks.pendingEvents == 0) != nil else { return }
        let change = routeGuard.applied.map { picture.changes(since: $0) } ?? "left by an earlier run: \(picture.entryList)"
        if routeGuard.repairing(now: agent.loop.nowMilliseconds) {
            Log.warning("uplinkd's routing entries keep changing behind its back (another tool fighting over them?): \(change)")
        } else {
            Log.notice("uplinkd's routing entries changed behind its back: \(change)")
        }
        agent.perform([.runHook(agent.core.repairEvent(now: agent.now()))])
    }
}
