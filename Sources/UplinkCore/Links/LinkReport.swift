/// How `uplinkd links` shows interfaces and link events (JSON and one human line).
package enum LinkReport {
    package static func json(_ facts: LinkFacts, kind: InterfaceKind, isUplink: Bool) -> JSONValue {
        .object([
            ("interface", .string(facts.name.value)),
            ("index", .int(facts.index)),
            ("kind", .string(kind.rawValue)),
            ("uplink", .bool(isUplink)),
            ("admin_up", .bool(facts.adminUp)),
            ("carrier", .bool(facts.carrier)),
            ("operstate", .string(facts.operState)),
            ("master_index", facts.masterIndex.map(JSONValue.int) ?? .null),
            ("addresses", .array(facts.addresses.map(json))),
            ("default_routes", .array(facts.defaultRoutes.map(json))),
        ])
    }

    package static func humanLine(_ facts: LinkFacts, kind: InterfaceKind, isUplink: Bool) -> String {
        var parts = [facts.name.value, kind.rawValue, isUplink ? "uplink" : "not-uplink",
                     "admin " + (facts.adminUp ? "up" : "down"), "carrier " + (facts.carrier ? "yes" : "no"),
                     "oper " + facts.operState]
        for address in facts.addresses {
            parts.append("\(address.address)/\(address.prefixLength)" + (address.scope == "global" ? "" : " (\(address.scope))"))
        }
        for route in facts.defaultRoutes {
            var text = "default"
            if let gateway = route.gateway { text += " via \(gateway)" }
            text += " metric \(route.metric)"
            if route.table != 254 { text += " table \(route.table)" }
            text += " proto \(route.protocolNumber)"
            parts.append(text)
        }
        return parts.joined(separator: "  ")
    }

    package static func json(_ event: LinkEvent, kind: InterfaceKind) -> JSONValue {
        let facts = event.facts
        var members: [(String, JSONValue)] = [
            ("event", .string(event.name)),
            ("interface", .string(facts.name.value)),
            ("index", .int(facts.index)),
        ]
        switch event {
        case .appeared:
            members.append(("kind", .string(kind.rawValue)))
        case .renamed(_, let previousName):
            members.append(("previous_name", .string(previousName.value)))
        case .addressAdded(_, let address), .addressRemoved(_, let address):
            members += addressMembers(address)
        case .defaultRouteAdded(_, let route), .defaultRouteRemoved(_, let route):
            members += routeMembers(route)
        case .disappeared, .adminChanged, .carrierChanged:
            break
        }
        let assessment = event.linkAssessment
        members.append(("verdict", .string(assessment.verdict.rawValue)))
        members.append(("reason", .string(assessment.reason.rawValue)))
        return .object(members)
    }

    package static func humanLine(_ event: LinkEvent) -> String {
        let assessment = event.linkAssessment
        var line = "\(event.facts.name.value): \(event.name)"
        switch event {
        case .renamed(_, let previousName): line += " from \(previousName)"
        case .addressAdded(_, let address), .addressRemoved(_, let address):
            line += " \(address.address)/\(address.prefixLength)"
        case .defaultRouteAdded(_, let route), .defaultRouteRemoved(_, let route):
            line += " default" + (route.gateway.map { " via \($0)" } ?? "") + " metric \(route.metric)"
        default: break
        }
        return line + " -> \(assessment.verdict.rawValue) (\(assessment.reason.rawValue))"
    }

    static func json(_ address: InterfaceAddress) -> JSONValue {
        .object(addressMembers(address) + [
            ("scope", .string(address.scope)),
            ("link_local", .bool(address.address.isLinkLocal)),
        ])
    }

    static func addressMembers(_ address: InterfaceAddress) -> [(String, JSONValue)] {
        [("address", .string(address.address.description)), ("prefix", .int(address.prefixLength)),
         ("family", .string(address.family.rawValue))]
    }

    static func json(_ route: DefaultRoute) -> JSONValue { .object(routeMembers(route)) }

    static func routeMembers(_ route: DefaultRoute) -> [(String, JSONValue)] {
        [("family", .string(route.family.rawValue)), ("gateway", .optional(route.gateway?.description)),
         ("metric", .int(route.metric)), ("table", .int(route.table)), ("protocol", .int(route.protocolNumber))]
    }
}
