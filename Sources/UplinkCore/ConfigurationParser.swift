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
public struct ConfigurationParser {
    public let fileName: String

    public init(fileName: String) {
        self.fileName = fileName
    }

    private enum Section {
        case check
        case uplinks
        case links
        case agent
        case dns
        case probe(name: String, line: Int, draft: ProbeDraft)
        case interface(InterfaceName)
        case kind(InterfaceKind)
    }

    public func parse(_ text: String) throws(ConfigurationError) -> Configuration {
        var configuration = Configuration()
        var section: Section?
        var seenKeys: Set<String> = []
        var seenSections: Set<String> = []
        /// `probes = ...` lines, checked once every [probe] section is known.
        var probeSelections: [(line: Int, names: [String])] = []

        func finish(_ section: Section?) throws(ConfigurationError) {
            guard case .probe(let name, let line, let draft)? = section else { return }
            do {
                configuration.customProbes.append(try draft.build(name: name))
            } catch {
                throw ConfigurationError(file: fileName, line: line, key: error.key, message: "probe '\(name)': \(error.message)")
            }
        }

        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            let trimmed = line.trimmingWhitespace
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }

            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else {
                    throw error(lineNumber, nil, "section header must end with ']'")
                }
                try finish(section)
                let inner = String(trimmed.dropFirst().dropLast()).trimmingWhitespace
                let words = inner.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                let sectionKey = words.joined(separator: " ")
                guard seenSections.insert(sectionKey).inserted else {
                    throw error(lineNumber, nil, "section [\(sectionKey.printableEscaped)] appears twice")
                }
                seenKeys = []
                section = try header(words, sectionKey: sectionKey, line: lineNumber)
                continue
            }

            guard let equals = trimmed.firstIndex(of: "=") else {
                throw error(lineNumber, nil, "expected 'key = value' or a [section] header")
            }
            let key = trimmed[..<equals].trimmingWhitespace
            let rawValue = trimmed[trimmed.index(after: equals)...].trimmingWhitespace
            guard !key.isEmpty else { throw error(lineNumber, nil, "missing key before '='") }
            guard let currentSection = section else {
                throw error(lineNumber, key, "key outside any section; put it under [check]")
            }
            guard seenKeys.insert(key).inserted else {
                throw error(lineNumber, key, "set twice in the same section")
            }
            // Every value error below is located here: file, line and key.
            do throws(ValueError) {
                let value = try ValueParser.unquote(rawValue)
                switch currentSection {
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
                case .interface(let name):
                    try ConfigurationKeys.interface.named("interface \(name)")
                        .apply(key, value, to: &configuration.interfaces[name, default: InterfaceSettings()])
                case .kind(let kind):
                    try ConfigurationKeys.kind.named("kind \(kind.rawValue)")
                        .apply(key, value, to: &configuration.kinds[kind, default: ProbingOverrides()])
                }
                if key == "probes" { probeSelections.append((lineNumber, ValueParser.list(value))) }
            } catch {
                throw self.error(lineNumber, key, error.message)
            }
        }
        try finish(section)

        if configuration.probes.isEmpty {
            throw ConfigurationError(file: fileName, line: nil, key: "default-probes",
                                     message: "no probes left: default-probes is off and no [probe NAME] section is given")
        }
        let known = configuration.probes.map(\.name)
        for selection in probeSelections {
            if let unknown = selection.names.first(where: { !known.contains($0) }) {
                throw error(selection.line, "probes", "no probe named '\(unknown.printableEscaped)'; the probe set has: \(known.joined(separator: " "))")
            }
        }
        let damping = configuration.agent.damping
        if damping.reuseLimit >= damping.suppressLimit {
            throw ConfigurationError(file: fileName, line: nil, key: "flap-reuse",
                                     message: "flap-reuse (\(damping.reuseLimit)) must be below flap-suppress (\(damping.suppressLimit)), or a suppressed uplink would never be released")
        }
        if damping.penaltyPerFlap > 0 && damping.ceiling < Double(damping.suppressLimit) {
            throw ConfigurationError(file: fileName, line: nil, key: "flap-max-suppress",
                                     message: "flap-max-suppress is too short for flap-half-life, flap-suppress and flap-reuse: the penalty could never reach flap-suppress, so damping would never act (make it longer, or set flap-penalty = 0 to turn damping off)")
        }
        if configuration.httpsOnly, let plain = configuration.probes.first(where: { $0.url.scheme == .http }) {
            throw ConfigurationError(file: fileName, line: nil, key: "https-only",
                                     message: "https-only is on but probe '\(plain.name)' uses plain HTTP (\(plain.url)); set default-probes = no and give https probes")
        }
        return configuration
    }

    private func header(_ words: [String], sectionKey: String, line: Int) throws(ConfigurationError) -> Section {
        switch (words.first, words.count) {
        case ("check", 1): return .check
        case ("uplinks", 1): return .uplinks
        case ("links", 1): return .links
        case ("agent", 1): return .agent
        case ("dns", 1): return .dns
        case ("probe", 2):
            guard ConfigurationParser.isValidProbeName(words[1]) else {
                throw error(line, nil, "probe name '\(words[1].printableEscaped)' may use only letters, digits, '-', '_' and '.'")
            }
            return .probe(name: words[1], line: line, draft: ProbeDraft())
        case ("interface", 2):
            do {
                return .interface(try ValueParser.interfaceName(words[1]))
            } catch {
                throw self.error(line, nil, error.message)
            }
        case ("kind", 2):
            do {
                return .kind(try ValueParser.kind(words[1]))
            } catch {
                throw self.error(line, nil, error.message)
            }
        default:
            throw error(line, nil, "unknown section [\(sectionKey.printableEscaped)]; expected [check], [agent], [dns], [uplinks], [links], [probe NAME], [kind KIND] or [interface NAME]")
        }
    }

    private func error(_ line: Int, _ key: String?, _ message: String) -> ConfigurationError {
        ConfigurationError(file: fileName, line: line, key: key, message: message)
    }

    static func isValidProbeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }
}
