import UplinkCore

/// Turns each batch from the link source into what the core takes: uplinkd's own
/// routes taken out (the route-failover hook's routes are not an uplink's), the
/// interfaces that are uplinks with their kind and whether their lease says metered.
/// Kinds are read once per interface (and name): every netlink batch re-selects the
/// uplinks, and sysfs does not change under them. A lease is read again when its
/// interface's addresses change (a new lease), and a little later once more.
final class LinkIntake {
    /// DHCP clients write the lease after they configured the address (dhclient runs
    /// its script first): read it again this much later, when it is surely there.
    static let leaseRereadDelayMilliseconds = 3_000

    private unowned let agent: Agent
    private var kinds: [Int: (name: InterfaceName, kind: InterfaceKind)] = [:]
    private var meteredLeases: [Int: Bool] = [:]

    init(agent: Agent) {
        self.agent = agent
    }

    /// After a reload: `[interface NAME] kind` and the lease settings may have changed.
    func forget() {
        kinds = [:]
        meteredLeases = [:]
    }

    /// The uplinks among `allLinks`, and the events that concern the uplinks (not
    /// uplinkd's own routes).
    func take(_ allLinks: [Int: LinkFacts], events allEvents: [LinkEvent]) -> (uplinks: [ObservedUplink], events: [LinkEvent]) {
        let configuration = agent.configuration
        let own = configuration.agent.routing, flows = configuration.flows.ownership
        let links = allLinks.mapValues { $0.withoutRoutes(ownedBy: own).withoutRoutes(ownedBy: flows) }
        let events = allEvents.filter { event in
            switch event {
            case .defaultRouteAdded(_, let route), .defaultRouteRemoved(_, let route): return !own.owns(route) && !flows.owns(route)
            default: return true
            }
        }
        kinds = kinds.filter { links[$0.key]?.name == $0.value.name }
        meteredLeases = meteredLeases.filter { links[$0.key] != nil }
        for event in events {
            switch event {
            case .addressAdded, .addressRemoved, .appeared, .renamed:
                meteredLeases[event.facts.index] = nil
                rereadLeaseSoon(event.facts.index)
            default: break
            }
        }
        var uplinks: [ObservedUplink] = []
        for facts in links.values.sorted(by: { $0.index < $1.index }) {
            let kind = kinds[facts.index]?.kind
                ?? agent.adapters.kinds.kind(of: facts.name, configured: configuration.configuredKind(of: facts.name))
            kinds[facts.index] = (facts.name, kind)
            guard configuration.uplinkSelection.isUplink(facts, kind: kind) else { continue }
            let metered = meteredLeases[facts.index]
                ?? agent.adapters.files.leaseSaysMetered(facts.name, index: facts.index, settings: configuration.dns)
            meteredLeases[facts.index] = metered
            uplinks.append(ObservedUplink(facts: facts, kind: kind, leaseSaysMetered: metered))
        }
        return (uplinks, events)
    }

    private func rereadLeaseSoon(_ index: Int) {
        agent.loop.schedule(afterMilliseconds: LinkIntake.leaseRereadDelayMilliseconds) { [weak self] in
            guard let self, agent.isRunning, let links = agent.links else { return }
            meteredLeases[index] = nil
            agent.linksChanged(links.links, events: [])
        }
    }
}
