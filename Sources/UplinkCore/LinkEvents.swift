/// A change the kernel reported about an interface, derived by comparing two link
/// states (so a normal notification and a full re-dump after an overflow give the
/// same kind of answer).
public enum LinkEvent: Sendable, Equatable {
    case appeared(LinkFacts)
    case disappeared(LinkFacts)
    case renamed(LinkFacts, previousName: String)
    case adminChanged(LinkFacts)
    case carrierChanged(LinkFacts)
    case addressAdded(LinkFacts, InterfaceAddress)
    case addressRemoved(LinkFacts, InterfaceAddress)
    case defaultRouteAdded(LinkFacts, DefaultRoute)
    case defaultRouteRemoved(LinkFacts, DefaultRoute)

    /// The interface as it is after the event (as it was, for `disappeared`).
    public var facts: LinkFacts {
        switch self {
        case .appeared(let facts), .disappeared(let facts), .renamed(let facts, _), .adminChanged(let facts),
             .carrierChanged(let facts), .addressAdded(let facts, _), .addressRemoved(let facts, _),
             .defaultRouteAdded(let facts, _), .defaultRouteRemoved(let facts, _):
            return facts
        }
    }

    public var name: String {
        switch self {
        case .appeared: return "appeared"
        case .disappeared: return "disappeared"
        case .renamed: return "renamed"
        case .adminChanged(let facts): return facts.adminUp ? "admin-up" : "admin-down"
        case .carrierChanged(let facts): return facts.carrier ? "carrier-up" : "carrier-down"
        case .addressAdded: return "address-added"
        case .addressRemoved: return "address-removed"
        case .defaultRouteAdded: return "route-added"
        case .defaultRouteRemoved: return "route-removed"
        }
    }

    /// The link-level verdict right after this event: carrier loss, admin down and the
    /// loss of the last usable address or route make the uplink `down` at once.
    public var linkAssessment: Assessment {
        if case .disappeared = self { return Assessment(.down, reason: "no-such-interface") }
        return LinkEvaluator.evaluate(facts).assessment
    }
}

/// Compares two link states keyed by interface index.
public enum LinkDiff {
    /// Events that turn `old` into `new`, ordered by interface index, and within one
    /// interface: appearance, rename, admin, carrier, addresses, routes.
    public static func events(from old: [Int: LinkFacts], to new: [Int: LinkFacts]) -> [LinkEvent] {
        var events: [LinkEvent] = []
        for index in Set(old.keys).union(new.keys).sorted() {
            switch (old[index], new[index]) {
            case (nil, let current?):
                events.append(.appeared(current))
            case (let previous?, nil):
                events.append(.disappeared(previous))
            case (let previous?, let current?):
                events += changes(from: previous, to: current)
            case (nil, nil):
                break
            }
        }
        return events
    }

    static func changes(from previous: LinkFacts, to current: LinkFacts) -> [LinkEvent] {
        var events: [LinkEvent] = []
        if previous.name != current.name {
            events.append(.renamed(current, previousName: previous.name.value))
        }
        if previous.adminUp != current.adminUp { events.append(.adminChanged(current)) }
        if previous.carrier != current.carrier { events.append(.carrierChanged(current)) }
        let oldAddresses = Set(previous.addresses), newAddresses = Set(current.addresses)
        for address in current.addresses where !oldAddresses.contains(address) {
            events.append(.addressAdded(current, address))
        }
        for address in previous.addresses where !newAddresses.contains(address) {
            events.append(.addressRemoved(current, address))
        }
        let oldRoutes = Set(previous.defaultRoutes), newRoutes = Set(current.defaultRoutes)
        for route in current.defaultRoutes where !oldRoutes.contains(route) {
            events.append(.defaultRouteAdded(current, route))
        }
        for route in previous.defaultRoutes where !newRoutes.contains(route) {
            events.append(.defaultRouteRemoved(current, route))
        }
        return events
    }
}

/// Which interfaces are uplinks.
public enum UplinkSelection: Sendable, Equatable {
    /// Interfaces with a default route, or of kind wifi or wwan; never loopback; virtual
    /// links (veth, bridge, tunnels, ...) only with a default route.
    case automatic
    /// Exactly these interfaces.
    case listed([String])

    public func isUplink(_ facts: LinkFacts, kind: InterfaceKind) -> Bool {
        switch self {
        case .listed(let names):
            return names.contains(facts.name.value)
        case .automatic:
            if facts.isLoopback { return false }
            if !facts.defaultRoutes.isEmpty { return true }
            if facts.linkType != nil { return false }
            return kind == .wifi || kind == .wwan
        }
    }
}
