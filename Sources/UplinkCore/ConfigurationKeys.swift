/// Every key of every section, with how its value is parsed and where it goes. The
/// parser and its "unknown key" messages both read these tables.
public enum ConfigurationKeys {
    /// `[check]`: how probes are sent and judged. Shared with command-line overrides.
    public static let check = KeyTable<Configuration>(section: "check", [
        ("timeout", { (value: String, c: inout Configuration) throws(ValueError) in
            c.probeTimeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
        ("success-threshold", { (value: String, c: inout Configuration) throws(ValueError) in
            c.successThresholdPercent = try ValueParser.percent(value) }),
        ("body-limit", { (value: String, c: inout Configuration) throws(ValueError) in
            c.bodyLimitBytes = try ValueParser.byteCount(value, range: 256...65_536) }),
        ("https-only", { (value: String, c: inout Configuration) throws(ValueError) in c.httpsOnly = try ValueParser.boolean(value) }),
        ("default-probes", { (value: String, c: inout Configuration) throws(ValueError) in c.useDefaultProbes = try ValueParser.boolean(value) }),
        ("validator-timeout", { (value: String, c: inout Configuration) throws(ValueError) in
            c.validatorTimeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
    ])

    /// `[agent]`: scheduling, hysteresis, primary selection, paths.
    public static let agent = KeyTable<AgentPolicy>(section: "agent", [
        ("interval", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.intervalMilliseconds = try ValueParser.duration(value, range: 1_000...86_400_000) }),
        ("suspect-interval", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.suspectIntervalMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
        ("failures-to-leave-online", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.failuresToLeaveOnline = try ValueParser.count(value, range: 1...100) }),
        ("successes-to-return", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.successesToReturnOnline = try ValueParser.count(value, range: 1...100) }),
        ("hold-down", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.holdDownMilliseconds = try ValueParser.duration(value, range: 0...3_600_000) }),
        ("probe-when-online", { (value: String, p: inout AgentPolicy) throws(ValueError) in p.probeWhenOnline = try ValueParser.boolean(value) }),
        ("priority", { (value: String, p: inout AgentPolicy) throws(ValueError) in p.priority = try ValueParser.priority(value) }),
        ("wwan-daily-budget", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.wwanDailyBudgetBytes = try ValueParser.optionalBudget(value) }),
        ("state-file", { (value: String, p: inout AgentPolicy) throws(ValueError) in p.stateFilePath = try ValueParser.absolutePath(value) }),
        ("hooks-dir", { (value: String, p: inout AgentPolicy) throws(ValueError) in p.hooksDirectory = try ValueParser.absolutePath(value) }),
        ("hook-timeout", { (value: String, p: inout AgentPolicy) throws(ValueError) in
            p.hookTimeoutMilliseconds = try ValueParser.duration(value, range: 1_000...600_000) }),
    ])

    /// `[dns]`: where servers come from and how names are resolved.
    public static let dns = KeyTable<DNSSettings>(section: "dns", [
        ("sources", { (value: String, s: inout DNSSettings) throws(ValueError) in
            var sources: Set<DNSSource> = []
            for word in ValueParser.list(value) {
                guard let source = DNSSource(rawValue: word) else {
                    throw ValueError("unknown source '\(word.printableEscaped)'; expected some of: " +
                                     DNSSource.allCases.map(\.rawValue).joined(separator: " "))
                }
                sources.insert(source)
            }
            guard !sources.isEmpty else { throw ValueError("name at least one source") }
            s.sources = sources
        }),
        ("dhclient-leases", { (value: String, s: inout DNSSettings) throws(ValueError) in
            let directories = ValueParser.list(value)
            guard !directories.isEmpty else { throw ValueError("expected one or more directories") }
            s.dhclientLeaseDirectories = []
            for directory in directories { s.dhclientLeaseDirectories.append(try ValueParser.absolutePath(directory)) }
        }),
        ("resolvconf-dir", { (value: String, s: inout DNSSettings) throws(ValueError) in s.resolvconfDirectory = try ValueParser.absolutePath(value) }),
        ("resolv-conf", { (value: String, s: inout DNSSettings) throws(ValueError) in s.resolvConfPath = try ValueParser.absolutePath(value) }),
        ("timeout", { (value: String, s: inout DNSSettings) throws(ValueError) in
            s.timeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
        ("hijack-check", { (value: String, s: inout DNSSettings) throws(ValueError) in s.hijackCheck = try ValueParser.boolean(value) }),
        ("known-answer", { (value: String, s: inout DNSSettings) throws(ValueError) in
            let words = ValueParser.list(value)
            guard words.count >= 2, let name = words.first.flatMap(ValueParser.hostName) else {
                throw ValueError("expected 'NAME ADDRESS[, ADDRESS...]' with a DNS name first, got '\(value.printableEscaped)'")
            }
            let addresses = try ValueParser.addressList(words.dropFirst().joined(separator: " "), at: 1...16)
            s.knownAnswer = KnownAnswer(name: name, addresses: addresses)
        }),
    ])

    /// `[interface NAME]` (the section name is filled in per interface).
    public static let interface = KeyTable<InterfaceSettings>(section: "interface NAME", [
        ("kind", { (value: String, s: inout InterfaceSettings) throws(ValueError) in s.kind = try ValueParser.kind(value) }),
        ("daily-budget", { (value: String, s: inout InterfaceSettings) throws(ValueError) in s.dailyBudgetBytes = try ValueParser.optionalBudget(value) }),
        ("dns", { (value: String, s: inout InterfaceSettings) throws(ValueError) in s.dnsServers = try ValueParser.addressList(value, at: 1...8) }),
    ])

    /// `[uplinks]`: which interfaces are uplinks.
    public static let uplinks = KeyTable<Configuration>(section: "uplinks", [
        ("interfaces", { (value: String, c: inout Configuration) throws(ValueError) in c.uplinkSelection = try ValueParser.uplinkSelection(value) }),
    ])

    /// `[links]`: the netlink socket.
    public static let links = KeyTable<Configuration>(section: "links", [
        ("receive-buffer", { (value: String, c: inout Configuration) throws(ValueError) in
            c.netlinkReceiveBufferBytes = try ValueParser.byteCount(value, range: 4_096...(64 << 20)) }),
    ])

    /// `[probe NAME]`: one probe (also `--url` and the options after it).
    public static let probe = KeyTable<ProbeDraft>(section: "probe", [
        ("url", { (value: String, d: inout ProbeDraft) throws(ValueError) in
            do throws(ProbeURLError) {
                d.url = try ProbeURL(parsing: value)
            } catch {
                throw ValueError("bad URL '\(value.printableEscaped)': \(error.message)")
            }
        }),
        ("expect-status", { (value: String, d: inout ProbeDraft) throws(ValueError) in
            guard let code = Int(value), (100...599).contains(code) else {
                throw ValueError("expected an HTTP status between 100 and 599, got '\(value.printableEscaped)'")
            }
            // Redirects and 511 are classified as portal evidence before validation, so
            // expecting one could never succeed.
            if (300...399).contains(code) || code == 511 {
                throw ValueError("\(code) is captive-portal evidence and cannot be the expected answer")
            }
            d.status = code
        }),
        ("expect-body", { (value: String, d: inout ProbeDraft) throws(ValueError) in d.bodyEquals = value }),
        ("expect-contains", { (value: String, d: inout ProbeDraft) throws(ValueError) in
            guard !value.isEmpty else { throw ValueError("an empty string is contained in every body") }
            d.bodyContains = value
        }),
        ("expect-regex", { (value: String, d: inout ProbeDraft) throws(ValueError) in
            do {
                d.bodyPattern = try BodyPattern(value)
            } catch {
                throw ValueError("invalid regular expression '\(value.printableEscaped)'")
            }
        }),
        ("validator", { (value: String, d: inout ProbeDraft) throws(ValueError) in
            let words = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let path = words.first, path.hasPrefix("/") else {
                throw ValueError("expected an absolute path to an executable, optionally followed by arguments")
            }
            guard !path.split(separator: "/").contains("..") else {
                throw ValueError("path '\(path.printableEscaped)' must not contain '..'")
            }
            d.validator = ValidatorCommand(path: path, arguments: Array(words.dropFirst()))
        }),
        ("authorization", { (value: String, d: inout ProbeDraft) throws(ValueError) in
            guard !value.isEmpty, !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
                throw ValueError("expected a single-line header value such as 'Bearer TOKEN'")
            }
            d.authorization = value
        }),
    ])
}
