/// The keys of connection routing: `[flows]`, `[class NAME]`, and the share of new
/// connections in `[interface NAME]`.
extension ConfigurationKeys {
    /// `[flows]`.
    package static let flows = KeyTable<FlowSettings>(section: "flows", [
        ("pinning", { (value: String, s: inout FlowSettings) throws(ValueError) in s.pinning = try ValueParser.boolean(value) }),
        ("sticky", { (value: String, s: inout FlowSettings) throws(ValueError) in
            let setting: FlowStickiness = try ValueParser.choice(value)
            s.sticky = setting
        }),
        ("rule-priority", { (value: String, s: inout FlowSettings) throws(ValueError) in
            s.rulePriority = try ValueParser.count(value, range: 1...(RoutingSettings.highestRulePriority - FlowSettings.slots.upperBound)) }),
        ("table-base", { (value: String, s: inout FlowSettings) throws(ValueError) in
            let base = try ValueParser.count(value, range: 256...4_000_000_000)
            s.tableBase = base
        }),
        ("route-protocol", { (value: String, s: inout FlowSettings) throws(ValueError) in
            s.protocolNumber = try ValueParser.count(value, range: 1...255) }),
    ])

    /// `[interface NAME]`: the uplink's share of new connections.
    static let uplinkFlow = KeyTable<UplinkFlowSettings>(section: "interface NAME", [
        ("tier", { (value: String, s: inout UplinkFlowSettings) throws(ValueError) in
            s.tier = try ValueParser.count(value, range: 1...100) }),
        ("weight", { (value: String, s: inout UplinkFlowSettings) throws(ValueError) in
            s.weight = try ValueParser.count(value, range: 1...100) }),
        ("spread", { (value: String, s: inout UplinkFlowSettings) throws(ValueError) in s.spread = try ValueParser.boolean(value) }),
    ])

    /// `[class NAME]`: one traffic class.
    package static let flowClass = KeyTable<FlowClass>(section: "class", [
        ("protocol", { (value: String, c: inout FlowClass) throws(ValueError) in
            let transport: FlowClass.Transport = try ValueParser.choice(value)
            c.transport = transport
        }),
        ("ports", { (value: String, c: inout FlowClass) throws(ValueError) in c.ports = try ValueParser.portRanges(value) }),
        ("destination", { (value: String, c: inout FlowClass) throws(ValueError) in
            let words = ValueParser.list(value)
            guard (1...64).contains(words.count) else { throw ValueError("expected 1 to 64 prefixes, got \(words.count)") }
            c.destinations = []
            for word in words {
                guard let prefix = IPPrefix(word) else {
                    throw ValueError("'\(word.printableEscaped)' is not an address or a prefix such as 203.0.113.0/24 (host bits clear)")
                }
                c.destinations.append(prefix)
            }
        }),
        ("uplinks", { (value: String, c: inout FlowClass) throws(ValueError) in c.uplinks = try ValueParser.interfaceNames(value) }),
        ("never", { (value: String, c: inout FlowClass) throws(ValueError) in c.never = try ValueParser.interfaceNames(value) }),
    ])
}

extension ValueParser {
    /// Ports and ranges separated by spaces or commas: `5060, 10000-20000`.
    package static func portRanges(_ text: String) throws(ValueError) -> [ClosedRange<Int>] {
        let words = list(text)
        guard (1...64).contains(words.count) else { throw ValueError("expected 1 to 64 ports or ranges, got \(words.count)") }
        var ranges: [ClosedRange<Int>] = []
        for word in words {
            let ends = word.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(ends.count), let low = ends[0], let high = ends.last!,
                  (1...65_535).contains(low), (low...65_535).contains(high), word.allSatisfy(\.isASCII) else {
                throw ValueError("'\(word.printableEscaped)' is not a port (1-65535) or a range LOW-HIGH")
            }
            ranges.append(low...high)
        }
        return ranges
    }

    /// Interface names separated by spaces or commas, each once.
    package static func interfaceNames(_ text: String) throws(ValueError) -> [InterfaceName] {
        var names: [InterfaceName] = []
        for word in list(text) {
            let name = try interfaceName(word)
            guard !names.contains(name) else { throw ValueError("\(name) is named twice") }
            names.append(name)
        }
        guard (1...FlowSettings.slots.upperBound).contains(names.count) else { throw ValueError("expected one or more interface names") }
        return names
    }
}
