/// A change the kernel reported about an interface, derived by comparing two link
/// states (so a normal notification and a full re-dump after an overflow give the
/// same kind of answer).
package enum LinkEvent: Sendable, Equatable {
    case appeared(LinkFacts)
    case disappeared(LinkFacts)
    case renamed(LinkFacts, previousName: InterfaceName)
    case adminChanged(LinkFacts)
    case carrierChanged(LinkFacts)
    case addressAdded(LinkFacts, InterfaceAddress)
    case addressRemoved(LinkFacts, InterfaceAddress)
    case defaultRouteAdded(LinkFacts, DefaultRoute)
    case defaultRouteRemoved(LinkFacts, DefaultRoute)

    /// The interface as it is after the event (as it was, for `disappeared`).
    package var facts: LinkFacts {
        switch self {
        case .appeared(let facts), .disappeared(let facts), .renamed(let facts, _), .adminChanged(let facts),
             .carrierChanged(let facts), .addressAdded(let facts, _), .addressRemoved(let facts, _),
             .defaultRouteAdded(let facts, _), .defaultRouteRemoved(let facts, _):
            return facts
        }
    }

    package var name: String {
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
    package var linkAssessment: Assessment {
        if case .disappeared = self { return Assessment(.down, reason: .noSuchInterface) }
        return LinkEvaluator.evaluate(facts).assessment
    }
}
