/// One configuration section's keys, each with the function that parses its value
/// into the section's target. The parser looks keys up here, and the "unknown key"
/// message lists the accepted ones from this same table, so the two cannot drift.
package struct KeyTable<Target>: Sendable {
    package typealias Apply = @Sendable (String, inout Target) throws(ValueError) -> Void

    /// The section as written in messages: `check`, `probe`, `interface eth0`, ...
    package let section: String
    let entries: [(key: String, apply: Apply)]

    package init(section: String, _ entries: [(String, Apply)]) {
        self.section = section
        self.entries = entries.map { (key: $0.0, apply: $0.1) }
    }

    package var keys: [String] { entries.map(\.key) }

    package func apply(_ key: String, _ value: String, to target: inout Target) throws(ValueError) {
        guard let entry = entries.first(where: { $0.key == key }) else {
            let expected = keys.count == 1 ? "expected: \(keys[0])" : "expected one of: \(keys.joined(separator: ", "))"
            throw ValueError("unknown key in [\(section)]; \(expected)")
        }
        try entry.apply(value, &target)
    }

    /// The same keys for another section name (`[interface NAME]` per interface).
    package func named(_ section: String) -> KeyTable<Target> {
        KeyTable(section: section, entries.map { ($0.key, $0.apply) })
    }

    /// These keys applied to a part of a larger target (the probing keys of
    /// `[agent]` go to `Configuration.probing`, say).
    package func lifted<Outer>(_ part: WritableKeyPath<Outer, Target> & Sendable, section: String,
                              only keys: [String]? = nil) -> KeyTable<Outer> {
        KeyTable<Outer>(section: section, entries.filter { keys?.contains($0.key) ?? true }.map { entry in
            let apply = entry.apply
            return (entry.key, { (value: String, outer: inout Outer) throws(ValueError) in try apply(value, &outer[keyPath: part]) })
        })
    }

    /// The keys of both tables, `self`'s first, under `self`'s section name.
    package static func + (lhs: KeyTable, rhs: KeyTable) -> KeyTable {
        KeyTable(section: lhs.section, (lhs.entries + rhs.entries).map { ($0.key, $0.apply) })
    }
}
