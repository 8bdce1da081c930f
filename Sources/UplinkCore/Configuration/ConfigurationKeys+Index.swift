/// Every section of the configuration file with the keys the parser accepts in it, read
/// from the same `KeyTable`s the parser applies. uplinkd.conf(5) is tested against this
/// index, so the manual cannot document a key the parser refuses or miss one it takes.
extension ConfigurationKeys {
    /// Each section as its header is written (`check`, `probe NAME`, `kind KIND`, ...),
    /// in the order uplinkd.conf(5) documents them, with its keys in table order.
    /// A section added to the parser must be added here too; a test compares this list
    /// with the sections the parser's "unknown section" message names.
    package static var sections: [(section: String, keys: [String])] {
        [
            ("check", check.keys),
            ("agent", agent.keys),
            ("uplinks", uplinks.keys),
            ("links", links.keys),
            ("dns", dns.keys),
            ("export", export.keys),
            ("mqtt", mqtt.keys),
            ("flows", flows.keys),
            ("probe NAME", probe.keys),
            ("class NAME", flowClass.keys),
            ("kind KIND", kind.keys),
            ("interface NAME", interface.keys),
        ]
    }
}
