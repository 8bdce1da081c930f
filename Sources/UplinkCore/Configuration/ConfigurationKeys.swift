/// Every key of every section, with how its value is parsed and where it goes. The
/// parser and its "unknown key" messages both read these tables.
package enum ConfigurationKeys {
    /// How one uplink is probed and judged: in `[kind KIND]` and `[interface NAME]`,
    /// and for every uplink in `[agent]` (`timeout` and `success-threshold` in `[check]`).
    package static let probing = KeyTable<ProbingOverrides>(section: "probing", [
        ("interval", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.intervalMilliseconds = try ValueParser.duration(value, range: 1_000...86_400_000) }),
        ("suspect-interval", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.suspectIntervalMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
        ("timeout", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.timeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
        ("probes", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            let names = ValueParser.list(value)
            guard !names.isEmpty else { throw ValueError("expected one or more probe names") }
            p.probeNames = names
        }),
        ("success-threshold", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.successThresholdPercent = try ValueParser.percent(value) }),
        ("failures-to-leave-online", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.failuresToLeaveOnline = try ValueParser.count(value, range: 1...100) }),
        ("successes-to-return", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.successesToReturnOnline = try ValueParser.count(value, range: 1...100) }),
        ("daily-budget", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.dailyBudget = try ValueParser.optionalBudget(value).map(Limit.value) ?? .off }),
        ("probe-when-online", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.probeWhenOnline = try ValueParser.boolean(value) }),
        ("metered", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            let setting: MeteredSetting = try ValueParser.choice(value)
            p.metered = setting
        }),
        ("stall-window", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.stallWindow = value == "off" ? .off : .value(try ValueParser.duration(value, range: 500...60_000)) }),
        ("liveness-interval", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.livenessInterval = value == "off" ? .off : .value(try ValueParser.duration(value, range: 1_000...3_600_000)) }),
        ("recover", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.recover = try ValueParser.boolean(value) }),
        ("recover-after", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.recoverAfterMilliseconds = try ValueParser.duration(value, range: 10_000...86_400_000) }),
        ("reset-after", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.resetAfter = value == "off" ? .off : .value(try ValueParser.duration(value, range: 10_000...604_800_000)) }),
        ("power-cycle-after", { (value: String, p: inout ProbingOverrides) throws(ValueError) in
            p.powerCycleAfter = value == "off" ? .off : .value(try ValueParser.duration(value, range: 10_000...604_800_000)) }),
    ]) + metering.lifted(\ProbingOverrides.metering, section: "probing")

    /// `[check]`: how probes are sent and judged. Shared with command-line overrides.
    package static let check = KeyTable<Configuration>(section: "check", [
        ("body-limit", { (value: String, c: inout Configuration) throws(ValueError) in
            c.bodyLimitBytes = try ValueParser.byteCount(value, range: 256...65_536) }),
        ("https-only", { (value: String, c: inout Configuration) throws(ValueError) in c.httpsOnly = try ValueParser.boolean(value) }),
        ("ca-file", { (value: String, c: inout Configuration) throws(ValueError) in
            c.caFilePath = try ValueParser.absoluteFilePath(value) }),
        ("captive-portal-api", { (value: String, c: inout Configuration) throws(ValueError) in
            c.useCaptivePortalAPI = try ValueParser.boolean(value) }),
        ("default-probes", { (value: String, c: inout Configuration) throws(ValueError) in c.useDefaultProbes = try ValueParser.boolean(value) }),
        ("validator-timeout", { (value: String, c: inout Configuration) throws(ValueError) in
            c.validatorTimeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000) }),
    ]) + probing.lifted(\Configuration.probing, section: "check", only: ["timeout", "success-threshold"])

    /// `[agent]`: primary selection, paths, and the probing keys for every uplink.
    package static let agent = KeyTable<Configuration>(section: "agent", [
        ("hold-down", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.holdDownMilliseconds = try ValueParser.duration(value, range: 0...3_600_000) }),
        ("verify-age", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.verifyAgeMilliseconds = try ValueParser.duration(value, range: 0...3_600_000) }),
        ("priority", { (value: String, c: inout Configuration) throws(ValueError) in c.agent.priority = try ValueParser.priority(value) }),
        ("route-protocol", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.routing.protocolNumber = try ValueParser.count(value, range: 1...255) }),
        ("route-table", { (value: String, c: inout Configuration) throws(ValueError) in
            let table = try ValueParser.count(value, range: 1...4_294_967_295)
            guard !RoutingSettings.reservedTables.contains(table) else {
                throw ValueError("expected a table of uplinkd's own; \(table) is the kernel's (253 default, 254 main, 255 local)")
            }
            c.agent.routing.table = table
        }),
        ("rule-priority", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.routing.rulePriority = try ValueParser.count(value, range: 1...RoutingSettings.highestRulePriority) }),
        ("keep-routes-on-stop", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.routing.keepOnStop = try ValueParser.boolean(value) }),
        ("wwan-daily-budget", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.wwanDailyBudgetBytes = try ValueParser.optionalBudget(value) }),
        ("state-file", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.stateFilePath = try ValueParser.absoluteFilePath(value) }),
        ("state-format", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.stateFileFormat = try ValueParser.count(value, range: StateFileFormat.versions) }),
        ("hooks-dir", { (value: String, c: inout Configuration) throws(ValueError) in c.agent.hooksDirectory = try ValueParser.absolutePath(value) }),
        ("vendor-hooks-dir", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.vendorHooksDirectory = try ValueParser.absolutePath(value) }),
        ("log-level", { (value: String, c: inout Configuration) throws(ValueError) in
            guard let level = LogLevel(rawValue: value) else {
                throw ValueError("expected one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", ")); got '\(value.printableEscaped)'")
            }
            c.agent.logLevel = level
        }),
        ("ready-timeout", { (value: String, c: inout Configuration) throws(ValueError) in
            // Below the unit's TimeoutStartSec= (90 s), or systemd would kill the start.
            c.agent.readyTimeoutMilliseconds = try ValueParser.duration(value, range: 0...60_000) }),
        ("hook-timeout", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.hookTimeoutMilliseconds = try ValueParser.duration(value, range: 1_000...600_000) }),
        ("avoid-degraded", { (value: String, c: inout Configuration) throws(ValueError) in
            let setting: AvoidDegraded = try ValueParser.choice(value)
            c.agent.avoidDegraded = setting
        }),
        ("degraded-loss", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.quality.lossPercent = try ValueParser.percent(value) }),
        ("degraded-rtt", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.quality.roundTripMilliseconds = try ValueParser.duration(value, range: 10...60_000) }),
        ("degraded-for", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.degradedForMilliseconds = try ValueParser.duration(value, range: 0...86_400_000) }),
        ("flap-penalty", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.damping.penaltyPerFlap = try ValueParser.count(value, range: 0...100_000) }),
        ("flap-half-life", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.damping.halfLifeMilliseconds = try ValueParser.duration(value, range: 1_000...86_400_000) }),
        ("flap-suppress", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.damping.suppressLimit = try ValueParser.count(value, range: 1...1_000_000) }),
        ("flap-reuse", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.damping.reuseLimit = try ValueParser.count(value, range: 1...1_000_000) }),
        ("flap-max-suppress", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.damping.maximumSuppressMilliseconds = try ValueParser.duration(value, range: 1_000...604_800_000) }),
        ("modemmanager", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.modems.use = try ValueParser.modemManagerUse(value) }),
        ("degraded-rsrp", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.quality.rsrpDBm = value == "off" ? nil : try ValueParser.signalLevel(value, range: -150 ... -40) }),
        ("modem-signal-interval", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.modems.signalIntervalMilliseconds = try ValueParser.duration(value, range: 5_000...3_600_000) }),
    ]) + probing.lifted(\Configuration.probing, section: "agent", only: [
        "interval", "suspect-interval", "failures-to-leave-online", "successes-to-return", "probe-when-online",
        "probes", "daily-budget", "metered", "stall-window", "liveness-interval", "recover", "recover-after", "reset-after", "power-cycle-after",
    ] + meteringKeyNames) + agentMetering + agentJournal

    /// `[dns]`: where servers come from and how names are resolved.
    package static let dns = KeyTable<DNSSettings>(section: "dns", [
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
        ("reuse-answers", { (value: String, s: inout DNSSettings) throws(ValueError) in
            s.answerReuseMilliseconds = try ValueParser.boolean(value) ? DNSSettings().answerReuseMilliseconds : nil }),
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
    package static let interface = KeyTable<InterfaceSettings>(section: "interface NAME", [
        ("kind", { (value: String, s: inout InterfaceSettings) throws(ValueError) in s.kind = try ValueParser.kind(value) }),
        ("dns", { (value: String, s: inout InterfaceSettings) throws(ValueError) in s.dnsServers = try ValueParser.addressList(value, at: 1...8) }),
        ("modem", { (value: String, s: inout InterfaceSettings) throws(ValueError) in s.modem = try ValueParser.modemBinding(value) }),
    ]) + probing.lifted(\InterfaceSettings.probing, section: "interface NAME")
        + uplinkFlow.lifted(\InterfaceSettings.flow, section: "interface NAME")

    /// `[kind KIND]`: the probing keys for every uplink of a kind.
    package static let kind = probing.named("kind KIND")

    /// `[uplinks]`: which interfaces are uplinks.
    package static let uplinks = KeyTable<Configuration>(section: "uplinks", [
        ("interfaces", { (value: String, c: inout Configuration) throws(ValueError) in c.uplinkSelection = try ValueParser.uplinkSelection(value) }),
    ])

    /// `[links]`: the netlink socket.
    package static let links = KeyTable<Configuration>(section: "links", [
        ("receive-buffer", { (value: String, c: inout Configuration) throws(ValueError) in
            c.netlinkReceiveBufferBytes = try ValueParser.byteCount(value, range: 4_096...(64 << 20)) }),
    ])

    /// `[probe NAME]`: one probe (also `--url` and the options after it).
    package static let probe = KeyTable<ProbeDraft>(section: "probe", [
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
        ("expect-regex", { (value: String, d: inout ProbeDraft) throws(ValueError) in d.bodyPattern = try BodyPattern(value) }),
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

    /// `[export]`: files the agent writes for other tools.
    package static let export = KeyTable<Configuration>(section: "export", [
        ("prometheus-textfile", { (value: String, c: inout Configuration) throws(ValueError) in
            let path = try ValueParser.absoluteFilePath(value)
            // node_exporter's textfile collector reads only `*.prom`; the file's
            // temporary copies (`NAME.prom.tmp.PID`) are then never read half-written.
            let name = path.split(separator: "/").last ?? ""
            guard name.hasSuffix(".prom"), name.count > ".prom".count else {
                throw ValueError("expected a file name ending in .prom (node_exporter's textfile collector reads only those), got '\(value.printableEscaped)'")
            }
            c.export.prometheusTextfilePath = path
        }),
    ])
}
