/// Compares two link states keyed by interface index.
package enum LinkDiff {
    /// Events that turn `old` into `new`, ordered by interface index, and within one
    /// interface: appearance, rename, admin, carrier, addresses, routes.
    package static func events(from old: [Int: LinkFacts], to new: [Int: LinkFacts]) -> [LinkEvent] {
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
            events.append(.renamed(current, previousName: previous.name))
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
