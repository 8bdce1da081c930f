/// Parses the INI-style configuration file (see config/uplinkd.conf):
///
///     # comment (a line starting with # or ;)
///     [check]
///     timeout = 5s
///     [probe NAME]
///     url = http://example.net/generate_204
///     [interface wwan0]
///     kind = wwan
///
/// Strict by design: an unknown section or key, a repeated key, or a bad value is an
/// error naming file, line and key, never a guess. Values run to the end of the line
/// (no trailing comments, since URLs and bodies may contain '#'); double quotes keep
/// leading or trailing spaces and allow \" \\ \n \t.
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
        case interface(name: String)
    }

    public func parse(_ text: String) throws(ConfigurationError) -> Configuration {
        var configuration = Configuration()
        var section: Section?
        var seenKeys: Set<String> = []
        var seenSections: Set<String> = []

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
                    throw error(lineNumber, nil, "section [\(sectionKey)] appears twice")
                }
                seenKeys = []
                switch (words.first, words.count) {
                case ("check", 1):
                    section = .check
                case ("uplinks", 1):
                    section = .uplinks
                case ("links", 1):
                    section = .links
                case ("agent", 1):
                    section = .agent
                case ("dns", 1):
                    section = .dns
                case ("probe", 2):
                    guard ConfigurationParser.isValidProbeName(words[1]) else {
                        throw error(lineNumber, nil, "probe name '\(words[1].printableEscaped)' may use only letters, digits, '-', '_' and '.'")
                    }
                    section = .probe(name: words[1], line: lineNumber, draft: ProbeDraft())
                case ("interface", 2):
                    if let problem = InterfaceName.problem(with: words[1]) {
                        throw error(lineNumber, nil, problem)
                    }
                    section = .interface(name: words[1])
                default:
                    throw error(lineNumber, nil, "unknown section [\(sectionKey.printableEscaped)]; expected [check], [agent], [dns], [uplinks], [links], [probe NAME] or [interface NAME]")
                }
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
                let value = try ConfigurationParser.unquote(rawValue)
                switch currentSection {
                case .check:
                    try ConfigurationParser.applyCheckKey(key, value, to: &configuration)
                case .probe(let name, let line, var draft):
                    try draft.apply(key, value)
                    section = .probe(name: name, line: line, draft: draft)
                case .uplinks:
                    try ConfigurationParser.applyUplinksKey(key, value, to: &configuration)
                case .links:
                    try ConfigurationParser.applyLinksKey(key, value, to: &configuration)
                case .agent:
                    try ConfigurationParser.applyAgentKey(key, value, to: &configuration.agent)
                case .dns:
                    try ConfigurationParser.applyDNSKey(key, value, to: &configuration.dns)
                case .interface(let name):
                    try ConfigurationParser.applyInterfaceKey(key, value, interface: name, to: &configuration)
                }
            } catch {
                throw self.error(lineNumber, key, error.message)
            }
        }
        try finish(section)

        if configuration.probes.isEmpty {
            throw ConfigurationError(file: fileName, line: nil, key: "default-probes",
                                     message: "no probes left: default-probes is off and no [probe NAME] section is given")
        }
        if configuration.httpsOnly, let plain = configuration.probes.first(where: { $0.url.scheme == .http }) {
            throw ConfigurationError(file: fileName, line: nil, key: "https-only",
                                     message: "https-only is on but probe '\(plain.name)' uses plain HTTP (\(plain.url)); set default-probes = no and give https probes")
        }
        return configuration
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

    /// Keys of the [check] section; shared with command-line overrides.
    public static func applyCheckKey(_ key: String, _ value: String, to configuration: inout Configuration) throws(ValueError) {
        switch key {
        case "timeout":
            configuration.probeTimeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000)
        case "success-threshold":
            configuration.successThresholdPercent = try ValueParser.percent(value)
        case "body-limit":
            configuration.bodyLimitBytes = try ValueParser.byteCount(value, range: 256...65_536)
        case "https-only":
            configuration.httpsOnly = try ValueParser.boolean(value)
        case "default-probes":
            configuration.useDefaultProbes = try ValueParser.boolean(value)
        case "validator-timeout":
            configuration.validatorTimeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000)
        default:
            throw ValueError("unknown key in [check]; expected one of: timeout, success-threshold, body-limit, https-only, default-probes, validator-timeout")
        }
    }

    /// Keys of the [uplinks] section.
    static func applyUplinksKey(_ key: String, _ value: String, to configuration: inout Configuration) throws(ValueError) {
        guard key == "interfaces" else { throw ValueError("unknown key in [uplinks]; expected: interfaces") }
        configuration.uplinkSelection = try ValueParser.uplinkSelection(value)
    }

    /// Keys of the [links] section.
    static func applyLinksKey(_ key: String, _ value: String, to configuration: inout Configuration) throws(ValueError) {
        guard key == "receive-buffer" else { throw ValueError("unknown key in [links]; expected: receive-buffer") }
        configuration.netlinkReceiveBufferBytes = try ValueParser.byteCount(value, range: 4_096...(64 << 20))
    }

    /// Keys of an [interface NAME] section.
    static func applyInterfaceKey(_ key: String, _ value: String, interface name: String,
                                  to configuration: inout Configuration) throws(ValueError) {
        switch key {
        case "kind":
            guard let kind = InterfaceKind(rawValue: value) else {
                throw ValueError("expected one of ethernet, wifi, wwan, other; got '\(value.printableEscaped)'")
            }
            configuration.interfaceKinds[name] = kind
        case "daily-budget":
            configuration.interfaceBudgets[name] = try ValueParser.optionalBudget(value)
        case "dns":
            configuration.dns.configuredServers[name] = try ValueParser.addressList(value, at: 1...8)
        default:
            throw ValueError("unknown key in [interface \(name)]; expected: kind, daily-budget, dns")
        }
    }

    /// Keys of the [dns] section.
    static func applyDNSKey(_ key: String, _ value: String, to settings: inout DNSSettings) throws(ValueError) {
        switch key {
        case "sources":
            var sources: Set<DNSSource> = []
            for word in ValueParser.list(value) {
                guard let source = DNSSource(rawValue: word) else {
                    throw ValueError("unknown source '\(word.printableEscaped)'; expected some of: " +
                                     DNSSource.allCases.map(\.rawValue).joined(separator: " "))
                }
                sources.insert(source)
            }
            guard !sources.isEmpty else { throw ValueError("name at least one source") }
            settings.sources = sources
        case "dhclient-leases":
            let directories = ValueParser.list(value)
            guard !directories.isEmpty else { throw ValueError("expected one or more directories") }
            settings.dhclientLeaseDirectories = []
            for directory in directories {
                settings.dhclientLeaseDirectories.append(try ValueParser.absolutePath(directory))
            }
        case "resolvconf-dir":
            settings.resolvconfDirectory = try ValueParser.absolutePath(value)
        case "resolv-conf":
            settings.resolvConfPath = try ValueParser.absolutePath(value)
        case "timeout":
            settings.timeoutMilliseconds = try ValueParser.duration(value, range: 100...60_000)
        case "hijack-check":
            settings.hijackCheck = try ValueParser.boolean(value)
        case "known-answer":
            let words = ValueParser.list(value)
            guard words.count >= 2, let name = words.first, ValueParser.isHostName(name) else {
                throw ValueError("expected 'NAME ADDRESS[, ADDRESS...]' with a DNS name first, got '\(value.printableEscaped)'")
            }
            let addresses = try ValueParser.addressList(words.dropFirst().joined(separator: " "), at: 1...16)
            settings.knownAnswer = KnownAnswer(name: name, addresses: addresses)
        default:
            throw ValueError("unknown key in [dns]; expected: sources, dhclient-leases, resolvconf-dir, resolv-conf, timeout, hijack-check, known-answer")
        }
    }

    /// Keys of the [agent] section.
    public static func applyAgentKey(_ key: String, _ value: String, to policy: inout AgentPolicy) throws(ValueError) {
        switch key {
        case "interval":
            policy.intervalMilliseconds = try ValueParser.duration(value, range: 1_000...86_400_000)
        case "suspect-interval":
            policy.suspectIntervalMilliseconds = try ValueParser.duration(value, range: 100...60_000)
        case "failures-to-leave-online":
            policy.failuresToLeaveOnline = try ValueParser.count(value, range: 1...100)
        case "successes-to-return":
            policy.successesToReturnOnline = try ValueParser.count(value, range: 1...100)
        case "hold-down":
            policy.holdDownMilliseconds = try ValueParser.duration(value, range: 0...3_600_000)
        case "probe-when-online":
            policy.probeWhenOnline = try ValueParser.boolean(value)
        case "priority":
            let entries = ValueParser.list(value)
            guard !entries.isEmpty else { throw ValueError("expected kinds and/or interface names, best first") }
            for entry in entries where InterfaceKind(rawValue: entry) == nil {
                if let problem = InterfaceName.problem(with: entry) { throw ValueError(problem) }
            }
            policy.priority = entries
        case "wwan-daily-budget":
            policy.wwanDailyBudgetBytes = try ValueParser.optionalBudget(value)
        case "state-file":
            policy.stateFilePath = try ValueParser.absolutePath(value)
        case "hooks-dir":
            policy.hooksDirectory = try ValueParser.absolutePath(value)
        case "hook-timeout":
            policy.hookTimeoutMilliseconds = try ValueParser.duration(value, range: 1_000...600_000)
        default:
            throw ValueError("unknown key in [agent]; expected one of: interval, suspect-interval, failures-to-leave-online, successes-to-return, hold-down, probe-when-online, priority, wwan-daily-budget, state-file, hooks-dir, hook-timeout")
        }
    }

    static func unquote(_ raw: String) throws(ValueError) -> String {
        guard raw.hasPrefix("\"") else { return raw }
        guard raw.count >= 2, raw.hasSuffix("\"") else { throw ValueError("unterminated quoted value") }
        var result = ""
        var escaping = false
        for character in raw.dropFirst().dropLast() {
            if escaping {
                switch character {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "\\": result.append("\\")
                case "\"": result.append("\"")
                default: throw ValueError("unknown escape '\\\(character)' in quoted value")
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "\"" {
                throw ValueError("a '\"' inside a quoted value must be written \\\"")
            } else {
                result.append(character)
            }
        }
        if escaping { throw ValueError("quoted value ends with a lone backslash") }
        return result
    }
}

/// A value that does not fit its key; the caller adds file, line and key.
public struct ValueError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// A probe being assembled from `key = value` pairs (a [probe] section or `--url`
/// options on the command line).
public struct ProbeDraft: Sendable {
    public var url: ProbeURL?
    public var status: Int?
    public var bodyEquals: String?
    public var bodyContains: String?
    public var bodyPattern: BodyPattern?
    public var validator: ValidatorCommand?
    public var authorization: String?

    public init() {}

    public static let keys = ["url", "expect-status", "expect-body", "expect-contains", "expect-regex", "validator", "authorization"]

    public mutating func apply(_ key: String, _ value: String) throws(ValueError) {
        switch key {
        case "url":
            do {
                url = try ProbeURL(parsing: value)
            } catch {
                throw ValueError("bad URL '\(value.printableEscaped)': \(error.message)")
            }
        case "expect-status":
            guard let code = Int(value), (100...599).contains(code) else {
                throw ValueError("expected an HTTP status between 100 and 599, got '\(value.printableEscaped)'")
            }
            // Redirects and 511 are classified as portal evidence before validation, so
            // expecting one could never succeed.
            if (300...399).contains(code) || code == 511 {
                throw ValueError("\(code) is captive-portal evidence and cannot be the expected answer")
            }
            status = code
        case "expect-body":
            bodyEquals = value
        case "expect-contains":
            guard !value.isEmpty else { throw ValueError("an empty string is contained in every body") }
            bodyContains = value
        case "expect-regex":
            do {
                bodyPattern = try BodyPattern(value)
            } catch {
                throw ValueError("invalid regular expression '\(value.printableEscaped)'")
            }
        case "validator":
            let words = value.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let path = words.first, path.hasPrefix("/") else {
                throw ValueError("expected an absolute path to an executable, optionally followed by arguments")
            }
            guard !path.split(separator: "/").contains("..") else {
                throw ValueError("path '\(path.printableEscaped)' must not contain '..'")
            }
            validator = ValidatorCommand(path: path, arguments: Array(words.dropFirst()))
        case "authorization":
            guard !value.isEmpty, !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
                throw ValueError("expected a single-line header value such as 'Bearer TOKEN'")
            }
            authorization = value
        default:
            throw ValueError("unknown key in [probe]; expected one of: \(ProbeDraft.keys.joined(separator: ", "))")
        }
    }

    public struct BuildError: Error {
        public let key: String?
        public let message: String
    }

    public func build(name: String) throws(BuildError) -> ProbeSpec {
        guard let url else { throw BuildError(key: "url", message: "has no url") }
        // A secret sent in clear text over every uplink, portals included, is not a secret.
        if authorization != nil && url.scheme != .https {
            throw BuildError(key: "authorization", message: "an Authorization header needs an https:// url")
        }
        return ProbeSpec(name: name, url: url,
                         expectation: Expectation(status: status, bodyEquals: bodyEquals, bodyContains: bodyContains,
                                                  bodyPattern: bodyPattern, validator: validator),
                         authorization: authorization)
    }
}

/// Parsers for the value types of the configuration.
public enum ValueParser {
    /// "5s", "500ms", "1m"; a unit is required so nobody guesses.
    public static func duration(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        let units: [(String, Int)] = [("ms", 1), ("s", 1_000), ("m", 60_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count).trimmingWhitespace
            guard let value = Int(number) else { break }
            let milliseconds = value.multipliedReportingOverflow(by: scale)
            guard !milliseconds.overflow, range.contains(milliseconds.partialValue) else {
                throw ValueError("'\(text)' is outside \(range.lowerBound)ms to \(range.upperBound)ms")
            }
            return milliseconds.partialValue
        }
        throw ValueError("expected a duration with a unit, such as 5s or 500ms; got '\(text.printableEscaped)'")
    }

    /// "50%" or "50", 1 to 100.
    public static func percent(_ text: String) throws(ValueError) -> Int {
        let number = text.hasSuffix("%") ? String(text.dropLast()).trimmingWhitespace : text
        guard let value = Int(number), (1...100).contains(value) else {
            throw ValueError("expected a percentage from 1% to 100%, got '\(text.printableEscaped)'")
        }
        return value
    }

    /// "4096", "4KiB", "1MiB".
    public static func byteCount(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        var number = text
        var scale = 1
        for (suffix, multiplier) in [("KiB", 1 << 10), ("MiB", 1 << 20)] where text.hasSuffix(suffix) {
            number = String(text.dropLast(3)).trimmingWhitespace
            scale = multiplier
        }
        let bytes = Int(number).map { $0.multipliedReportingOverflow(by: scale) }
        guard let bytes, !bytes.overflow, range.contains(bytes.partialValue) else {
            throw ValueError("expected a size from \(range.lowerBound) to \(range.upperBound) bytes (e.g. 4096 or 4KiB), got '\(text.printableEscaped)'")
        }
        return bytes.partialValue
    }

    /// A whole number in a range.
    public static func count(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ValueError("expected a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text.printableEscaped)'")
        }
        return value
    }

    /// "off" or a size such as 5MiB (1 KiB to 1 TiB).
    public static func optionalBudget(_ text: String) throws(ValueError) -> Int? {
        if text == "off" { return nil }
        return try byteCount(text, range: 1_024...(1 << 40))
    }

    /// An absolute path without "..", so a configuration cannot point outside where it says.
    public static func absolutePath(_ text: String) throws(ValueError) -> String {
        guard text.hasPrefix("/"), !text.split(separator: "/").contains(".."),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw ValueError("expected an absolute path without '..', got '\(text.printableEscaped)'")
        }
        return text
    }

    /// IP addresses separated by spaces or commas; unspecified and multicast refused.
    public static func addressList(_ text: String, at counts: ClosedRange<Int>) throws(ValueError) -> [IPAddress] {
        let words = list(text)
        guard counts.contains(words.count) else {
            throw ValueError("expected \(counts.lowerBound) to \(counts.upperBound) IP addresses, got \(words.count)")
        }
        var addresses: [IPAddress] = []
        for word in words {
            guard let address = IPAddress(word), !address.isUnspecified else {
                throw ValueError("'\(word.printableEscaped)' is not an IPv4 or IPv6 address")
            }
            addresses.append(address)
        }
        return addresses
    }

    /// A DNS name: labels of letters, digits, '-' and '_', separated by dots, at most
    /// 253 characters.
    public static func isHostName(_ text: String) -> Bool {
        let labels = text.hasSuffix(".") ? text.dropLast().split(separator: ".", omittingEmptySubsequences: false)
                                         : text.split(separator: ".", omittingEmptySubsequences: false)
        guard !text.isEmpty, text.count <= 253, IPAddress(text) == nil else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.count) && label.unicodeScalars.allSatisfy { scalar in
                (scalar.value >= 0x30 && scalar.value <= 0x39) || (scalar.value | 0x20 >= 0x61 && scalar.value | 0x20 <= 0x7a)
                    || scalar == "-" || scalar == "_"
            }
        }
    }

    /// Words separated by spaces, tabs or commas.
    public static func list(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
    }

    /// "auto", or interface names separated by spaces or commas.
    public static func uplinkSelection(_ text: String) throws(ValueError) -> UplinkSelection {
        if text == "auto" { return .automatic }
        let names = list(text)
        guard !names.isEmpty else { throw ValueError("expected 'auto' or a list of interface names") }
        for name in names {
            if let problem = InterfaceName.problem(with: name) { throw ValueError(problem) }
        }
        return .listed(names)
    }

    public static func boolean(_ text: String) throws(ValueError) -> Bool {
        switch text.lowercased() {
        case "yes", "true", "on": return true
        case "no", "false", "off": return false
        default: throw ValueError("expected yes or no, got '\(text.printableEscaped)'")
        }
    }
}
