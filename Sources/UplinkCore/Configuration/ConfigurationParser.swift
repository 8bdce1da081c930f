/// Parses the INI-style configuration file (see config/uplinkd.conf):
///
///     # comment (a line starting with # or ;)
///     [check]
///     timeout = 5s
///     [probe NAME]
///     url = http://example.net/generate_204
///     [kind wwan]
///     interval = 30m
///     [interface wwan0]
///     kind = wwan
///
/// Strict by design: an unknown section or key, a repeated key, or a bad value is an
/// error naming file, line and key, never a guess. Values run to the end of the line
/// (no trailing comments, since URLs and bodies may contain '#'); double quotes keep
/// leading or trailing spaces and allow \" \\ \n \t. The keys of each section are in
/// `ConfigurationKeys`.
///
/// Drop-in files (`uplinkd.conf.d/*.conf`) are read after the main file, in name
/// order, into the same configuration: a later file may open a section again and its
/// keys override earlier ones (a list is replaced, not extended), and a `[probe NAME]`
/// given again replaces the earlier probe. Within one file the strict rules hold.
public struct ConfigurationParser {
    /// The main file: named by errors that concern the whole configuration.
    package let fileName: String

    public init(fileName: String) {
        self.fileName = fileName
    }

    /// One file's name and text, in the order they apply.
    package struct Source: Sendable {
        package var fileName: String
        package var text: String

        package init(fileName: String, text: String) {
            self.fileName = fileName
            self.text = text
        }
    }

    private enum Section {
        case check
        case uplinks
        case links
        case agent
        case dns
        case export
        case mqtt
        case flows
        case probe(name: String, line: Int, draft: ProbeDraft)
        case flowClass(FlowClass)
        case interface(InterfaceName)
        case kind(InterfaceKind)
    }

    public func parse(_ text: String) throws(ConfigurationError) -> Configuration {
        try parse([Source(fileName: fileName, text: text)])
    }

    /// A key in its section (the section as written: `interface eth0`, `agent`).
    private struct Place: Hashable, Comparable {
        var section: String
        var key: String

        static func < (a: Place, b: Place) -> Bool { (a.section, a.key) < (b.section, b.key) }
    }

    /// Where a key was last set, and to what. Checks of the merged configuration name
    /// the file that decided, a drop-in's included.
    private typealias Origins = [Place: (file: String, line: Int, value: String)]

    /// The main file and its drop-ins, in the order they apply.
    package func parse(_ sources: [Source]) throws(ConfigurationError) -> Configuration {
        var configuration = Configuration()
        var origins: Origins = [:]
        for source in sources {
            try parse(source, into: &configuration, origins: &origins)
        }
        /// An error about a key, located where the last file set it (or, never set,
        /// the main file).
        func error(_ key: String, in sections: [String], _ message: String) -> ConfigurationError {
            let origin = sections.compactMap { origins[Place(section: $0, key: key)] }.first
            return ConfigurationError(file: origin?.file ?? fileName, line: origin?.line, key: key, message: message)
        }

        if configuration.probes.isEmpty {
            throw error("default-probes", in: ["check"],
                        "no probes left: default-probes is off and no [probe NAME] section is given")
        }
        // `probes =` lines, checked now that every [probe] section is known; a later
        // file's line replaced an earlier one of the same section.
        let known = configuration.probes.map(\.name)
        for (place, origin) in origins.sorted(by: { $0.key < $1.key }) where place.key == "probes" {
            if let unknown = ValueParser.list(origin.value).first(where: { !known.contains($0) }) {
                throw ConfigurationError(file: origin.file, line: origin.line, key: "probes",
                                         message: "no probe named '\(unknown.printableEscaped)'; the probe set has: \(known.joined(separator: " "))")
            }
        }
        let damping = configuration.agent.damping
        if damping.reuseLimit >= damping.suppressLimit {
            let key = origins[Place(section: "agent", key: "flap-reuse")] != nil
                || origins[Place(section: "agent", key: "flap-suppress")] == nil ? "flap-reuse" : "flap-suppress"
            throw error(key, in: ["agent"],
                        "flap-reuse (\(damping.reuseLimit)) must be below flap-suppress (\(damping.suppressLimit)), or a suppressed uplink would never be released")
        }
        if damping.penaltyPerFlap > 0 && damping.ceiling < Double(damping.suppressLimit) {
            throw error("flap-max-suppress", in: ["agent"],
                        "flap-max-suppress is too short for flap-half-life, flap-suppress and flap-reuse: the penalty could never reach flap-suppress, so damping would never act (make it longer, or set flap-penalty = 0 to turn damping off)")
        }
        if configuration.httpsOnly, let plain = configuration.probes.first(where: { $0.url.scheme == .http }) {
            throw error("https-only", in: ["check"],
                        "https-only is on but probe '\(plain.name)' uses plain HTTP (\(plain.url)); set default-probes = no and give https probes")
        }
        try checkRecoveryLadders(configuration, error)
        try checkMQTT(configuration.mqtt, origins: origins, error: error)
        try checkPlanStarts(configuration, error)
        try checkFlows(configuration, error)
        return configuration
    }

    /// The flow rules stay in front of the route hook's, and the tables clear of its.
    private func checkFlows(_ configuration: Configuration,
                            _ error: (String, [String], String) -> ConfigurationError) throws(ConfigurationError) {
        let flows = configuration.flows, routing = configuration.agent.routing
        guard flows.pinning else { return }
        if flows.rulePriority + FlowSettings.slots.upperBound >= routing.rulePriority {
            throw error("rule-priority", ["flows"],
                        "[flows] rule-priority \(flows.rulePriority) leaves no room for its \(FlowSettings.slots.upperBound + 1) rules in front of [agent] rule-priority \(routing.rulePriority)")
        }
        if (flows.tableBase...(flows.tableBase + FlowSettings.slots.upperBound)).contains(routing.table) {
            throw error("table-base", ["flows"],
                        "[flows] table-base \(flows.tableBase) puts an uplink's table on [agent] route-table \(routing.table)")
        }
        if flows.protocolNumber == routing.protocolNumber {
            throw error("route-protocol", ["flows"],
                        "[flows] route-protocol must differ from [agent] route-protocol (\(routing.protocolNumber))")
        }
    }

    /// Every ladder the layers can make climbs in order: reconnect, then reset, then
    /// power cycle, each later than the one before.
    private func checkRecoveryLadders(_ configuration: Configuration,
                                      _ error: (String, [String], String) -> ConfigurationError) throws(ConfigurationError) {
        var ladders: [(sections: [String], settings: RecoverySettings)] = [
            (["agent"], configuration.probing.applied(to: .defaults(metered: true)).recovery),
        ]
        for kind in configuration.kinds.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            let settings = configuration.kinds[kind]!.applied(to: configuration.probing.applied(to: .defaults(metered: true)))
            ladders.append((["kind \(kind.rawValue)", "agent"], settings.recovery))
        }
        for name in configuration.interfaces.keys.sorted() {
            let kind = configuration.interfaces[name]?.kind ?? .wwan
            let settings = configuration.probingSettings(for: name, kind: kind, metered: true)
            ladders.append((["interface \(name)", "kind \(kind.rawValue)", "agent"], settings.recovery))
        }
        for (sections, ladder) in ladders where ladder.enabled {
            let seconds = { (milliseconds: Int) in "\(milliseconds / 1_000) s" }
            if let reset = ladder.resetAfterMilliseconds, reset <= ladder.recoverAfterMilliseconds {
                throw error("reset-after", sections,
                            "reset-after (\(seconds(reset))) must be longer than recover-after (\(seconds(ladder.recoverAfterMilliseconds))): the bearer is reconnected first")
            }
            let before = ladder.resetAfterMilliseconds ?? ladder.recoverAfterMilliseconds
            if let powerCycle = ladder.powerCycleAfterMilliseconds, powerCycle <= before {
                throw error("power-cycle-after", sections,
                            "power-cycle-after (\(seconds(powerCycle))) must be longer than \(ladder.resetAfterMilliseconds == nil ? "recover-after" : "reset-after") (\(seconds(before))): the ladder climbs one step at a time")
            }
        }
    }

    /// `[mqtt]` keys that only make sense together.
    private func checkMQTT(_ mqtt: MQTTSettings, origins: Origins,
                           error: (String, [String], String) -> ConfigurationError) throws(ConfigurationError) {
        let setKeys = ConfigurationKeys.mqtt.keys.filter { origins[Place(section: "mqtt", key: $0)] != nil }
        guard let broker = mqtt.broker else {
            if let first = setKeys.first {
                throw error(first, ["mqtt"], "[mqtt] needs broker = mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
            }
            return
        }
        if !broker.tls, let key = ["ca-file", "certificate-file", "key-file"].first(where: setKeys.contains) {
            throw error(key, ["mqtt"], "\(key) needs TLS: broker must be mqtts://, not \(broker)")
        }
        if (mqtt.certificateFilePath == nil) != (mqtt.keyFilePath == nil) {
            let key = mqtt.certificateFilePath == nil ? "key-file" : "certificate-file"
            throw error(key, ["mqtt"], "certificate-file and key-file go together (a client certificate and its key)")
        }
        if mqtt.homeAssistant, mqtt.discoveryPrefix == mqtt.topicPrefix {
            throw error("discovery-prefix", ["mqtt"], "discovery-prefix must differ from topic-prefix")
        }
    }

    /// One file's sections and keys applied to `configuration`.
    private func parse(_ source: Source, into configuration: inout Configuration,
                       origins: inout Origins) throws(ConfigurationError) {
        let file = source.fileName
        var section: Section?
        var sectionKey = ""
        var seenKeys: Set<String> = []
        var seenSections: Set<String> = []

        var lineNumber = 0
        for rawLine in source.text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            let trimmed = line.trimmingWhitespace
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }

            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else {
                    throw error(file, lineNumber, nil, "section header must end with ']'")
                }
                try finish(section, file: file, into: &configuration)
                let inner = String(trimmed.dropFirst().dropLast()).trimmingWhitespace
                let words = inner.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                sectionKey = words.joined(separator: " ")
                guard seenSections.insert(sectionKey).inserted else {
                    throw error(file, lineNumber, nil, "section [\(sectionKey.printableEscaped)] appears twice")
                }
                seenKeys = []
                section = try header(words, sectionKey: sectionKey, file: file, line: lineNumber)
                continue
            }

            guard let equals = trimmed.firstIndex(of: "=") else {
                throw error(file, lineNumber, nil, "expected 'key = value' or a [section] header")
            }
            let key = trimmed[..<equals].trimmingWhitespace
            let rawValue = trimmed[trimmed.index(after: equals)...].trimmingWhitespace
            guard !key.isEmpty else { throw error(file, lineNumber, nil, "missing key before '='") }
            guard var currentSection = section else {
                throw error(file, lineNumber, key, "key outside any section; put it under [check]")
            }
            guard seenKeys.insert(key).inserted else {
                throw error(file, lineNumber, key, "set twice in the same section")
            }
            // Every value error below is located here: file, line and key.
            do throws(ValueError) {
                let value = try ValueParser.unquote(rawValue)
                try apply(key, value, in: &currentSection, to: &configuration)
                section = currentSection
                origins[Place(section: sectionKey, key: key)] = (file, lineNumber, value)
            } catch {
                throw self.error(file, lineNumber, key, error.message)
            }
        }
        try finish(section, file: file, into: &configuration)
    }

    /// The end of a section: a `[probe NAME]` section becomes a probe, a `[class NAME]`
    /// section a traffic class.
    private func finish(_ section: Section?, file: String, into configuration: inout Configuration) throws(ConfigurationError) {
        if case .flowClass(let flowClass)? = section {
            if let problem = flowClass.problem {
                throw ConfigurationError(file: file, line: flowClass.line, key: nil, message: "class '\(flowClass.name)': \(problem)")
            }
            // A drop-in's class of the same name replaces the earlier one where it was.
            if let earlier = configuration.flows.classes.firstIndex(where: { $0.name == flowClass.name }) {
                configuration.flows.classes[earlier] = flowClass
            } else {
                configuration.flows.classes.append(flowClass)
            }
            return
        }
        guard case .probe(let name, let line, let draft)? = section else { return }
        let probe: ProbeSpec
        do {
            probe = try draft.build(name: name)
        } catch {
            throw ConfigurationError(file: file, line: line, key: error.key, message: "probe '\(name)': \(error.message)")
        }
        // A drop-in's probe of the same name replaces the earlier one where it was.
        if let earlier = configuration.customProbes.firstIndex(where: { $0.name == name }) {
            configuration.customProbes[earlier] = probe
        } else {
            configuration.customProbes.append(probe)
        }
    }

    /// One `key = value` of `section`.
    private func apply(_ key: String, _ value: String, in section: inout Section,
                       to configuration: inout Configuration) throws(ValueError) {
        switch section {
        case .check:
            try ConfigurationKeys.check.apply(key, value, to: &configuration)
        case .probe(let name, let line, var draft):
            try draft.apply(key, value)
            section = .probe(name: name, line: line, draft: draft)
        case .uplinks:
            try ConfigurationKeys.uplinks.apply(key, value, to: &configuration)
        case .links:
            try ConfigurationKeys.links.apply(key, value, to: &configuration)
        case .agent:
            try ConfigurationKeys.agent.apply(key, value, to: &configuration)
        case .dns:
            try ConfigurationKeys.dns.apply(key, value, to: &configuration.dns)
        case .export:
            try ConfigurationKeys.export.apply(key, value, to: &configuration)
        case .mqtt:
            try ConfigurationKeys.mqtt.apply(key, value, to: &configuration.mqtt)
        case .flows:
            try ConfigurationKeys.flows.apply(key, value, to: &configuration.flows)
        case .flowClass(var flowClass):
            try ConfigurationKeys.flowClass.named("class \(flowClass.name)").apply(key, value, to: &flowClass)
            section = .flowClass(flowClass)
        case .interface(let name):
            try ConfigurationKeys.interface.named("interface \(name)")
                .apply(key, value, to: &configuration.interfaces[name, default: InterfaceSettings()])
        case .kind(let kind):
            try ConfigurationKeys.kind.named("kind \(kind.rawValue)")
                .apply(key, value, to: &configuration.kinds[kind, default: ProbingOverrides()])
        }
    }

    private func header(_ words: [String], sectionKey: String, file: String, line: Int) throws(ConfigurationError) -> Section {
        switch (words.first, words.count) {
        case ("check", 1): return .check
        case ("uplinks", 1): return .uplinks
        case ("links", 1): return .links
        case ("agent", 1): return .agent
        case ("dns", 1): return .dns
        case ("export", 1): return .export
        case ("mqtt", 1): return .mqtt
        case ("flows", 1): return .flows
        case ("class", 2):
            guard ConfigurationParser.isValidProbeName(words[1]) else {
                throw error(file, line, nil, "class name '\(words[1].printableEscaped)' may use only letters, digits, '-', '_' and '.'")
            }
            var flowClass = FlowClass(name: words[1])
            flowClass.line = line
            return .flowClass(flowClass)
        case ("probe", 2):
            guard ConfigurationParser.isValidProbeName(words[1]) else {
                throw error(file, line, nil, "probe name '\(words[1].printableEscaped)' may use only letters, digits, '-', '_' and '.'")
            }
            return .probe(name: words[1], line: line, draft: ProbeDraft())
        case ("interface", 2):
            do {
                return .interface(try ValueParser.interfaceName(words[1]))
            } catch {
                throw self.error(file, line, nil, error.message)
            }
        case ("kind", 2):
            do {
                return .kind(try ValueParser.kind(words[1]))
            } catch {
                throw self.error(file, line, nil, error.message)
            }
        default:
            throw error(file, line, nil, "unknown section [\(sectionKey.printableEscaped)]; expected [check], [agent], [dns], [uplinks], [links], [export], [mqtt], [flows], [probe NAME], [class NAME], [kind KIND] or [interface NAME]")
        }
    }

    private func error(_ file: String, _ line: Int, _ key: String?, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: line, key: key, message: message)
    }

    static func isValidProbeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }
}
