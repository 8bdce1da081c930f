/// Where the MQTT broker is: `mqtt://HOST[:PORT]` (plain, port 1883) or
/// `mqtts://HOST[:PORT]` (TLS with the certificate verified, port 8883). HOST is a
/// DNS name, an IPv4 literal or a bracketed IPv6 literal.
package struct MQTTBroker: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int
    package var tls: Bool

    package init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Whether `host` is an address literal: no name lookup is needed to connect.
    package var hostIsAddress: Bool { IPAddress(host) != nil }

    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }

    /// Parses the `broker` value.
    package static func parse(_ text: String) throws(ValueError) -> MQTTBroker {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst("mqtt://".count)
        } else if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst("mqtts://".count)
        } else {
            throw ValueError("expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT], got '\(text.printableEscaped)'")
        }
        var hostPart = rest
        var portPart: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw ValueError("IPv6 address without ']' in '\(text.printableEscaped)'") }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ValueError("expected ':PORT' after ']' in '\(text.printableEscaped)'") }
                portPart = after.dropFirst()
            }
            guard let address = IPAddress(String(hostPart)), address.family == .ipv6 else {
                throw ValueError("'\(String(hostPart).printableEscaped)' is not an IPv6 address")
            }
        } else if let colon = rest.firstIndex(of: ":") {
            hostPart = rest[..<colon]
            portPart = rest[rest.index(after: colon)...]
        }
        let host = String(hostPart)
        guard !host.isEmpty, IPAddress(host) != nil || HostName.isValid(host) else {
            throw ValueError("'\(host.printableEscaped)' is not a host name or address (no path, user or query is allowed)")
        }
        var port = tls ? 8883 : 1883
        if let portPart {
            guard let value = Int(portPart), (1...65_535).contains(value) else {
                throw ValueError("port '\(String(portPart).printableEscaped)' is not a number from 1 to 65535")
            }
            port = value
        }
        return MQTTBroker(host: host, port: port, tls: tls)
    }
}

/// The MQTT push channel (`[mqtt]`): off unless `broker` is set. See uplinkd(8), "MQTT".
package struct MQTTSettings: Sendable, Equatable {
    package var broker: MQTTBroker?
    /// Certificates the broker's is verified against (PEM); nil: the system's store.
    package var caFilePath: String?
    /// A client certificate and its key (PEM), both or neither.
    package var certificateFilePath: String?
    package var keyFilePath: String?
    /// `username = ...` and `password = ...` (mode 0600, owned by the agent's user).
    package var credentialsFilePath: String?
    /// The gateway's name in topics; nil: the machine id.
    package var nodeID: String?
    package var topicPrefix = "uplinkd"
    /// How often `state` is published again while nothing changes, on an unmetered
    /// primary and on a metered one (chosen for the monthly byte figure in Tests/bench/README.md).
    package var heartbeatMilliseconds = 15 * 60_000
    package var meteredHeartbeatMilliseconds = 12 * 3_600_000
    /// The MQTT keep-alive, likewise; the broker gives the last will after 1.5 times it.
    package var keepAliveSeconds = 60
    package var meteredKeepAliveSeconds = 25 * 60
    /// Events kept while the broker cannot be reached (newest kept, oldest dropped).
    package var queueLimit = 100
    package var homeAssistant = false
    package var discoveryPrefix = "homeassistant"

    package init() {}

    package var enabled: Bool { broker != nil }

    /// A topic prefix: one or more levels of printable ASCII without the wildcards
    /// `+` and `#`, no empty level, not starting with `$` (the broker's own topics).
    package static func topicPrefix(_ text: String) throws(ValueError) -> String {
        guard !text.isEmpty, text.utf8.count <= 128 else { throw ValueError("expected 1 to 128 characters") }
        guard !text.hasPrefix("$") else { throw ValueError("a topic starting with '$' is reserved for the broker") }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) else {
            throw ValueError("'\(text.printableEscaped)' may not contain '+', '#', spaces or control characters")
        }
        guard !text.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            throw ValueError("'\(text.printableEscaped)' has an empty topic level (a leading, trailing or doubled '/')")
        }
        return text
    }

    /// A node id: letters, digits, '-' and '_' (Home Assistant's rule for ids in topics).
    package static func nodeID(_ text: String) throws(ValueError) -> String {
        guard !text.isEmpty, text.utf8.count <= 64,
              text.utf8.allSatisfy({ TopicName.isIdentifierByte($0) }) else {
            throw ValueError("expected 1 to 64 letters, digits, '-' or '_', got '\(text.printableEscaped)'")
        }
        return text
    }
}

extension ConfigurationKeys {
    /// `[mqtt]`: the push channel to an MQTT broker.
    package static let mqtt = KeyTable<MQTTSettings>(section: "mqtt", [
        ("broker", { (value: String, m: inout MQTTSettings) throws(ValueError) in m.broker = try MQTTBroker.parse(value) }),
        ("ca-file", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.caFilePath = try ValueParser.absoluteFilePath(value) }),
        ("certificate-file", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.certificateFilePath = try ValueParser.absoluteFilePath(value) }),
        ("key-file", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.keyFilePath = try ValueParser.absoluteFilePath(value) }),
        ("credentials-file", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.credentialsFilePath = try ValueParser.absoluteFilePath(value) }),
        ("node-id", { (value: String, m: inout MQTTSettings) throws(ValueError) in m.nodeID = try MQTTSettings.nodeID(value) }),
        ("topic-prefix", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.topicPrefix = try MQTTSettings.topicPrefix(value) }),
        ("heartbeat", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.heartbeatMilliseconds = try ValueParser.duration(value, range: 10_000...86_400_000) }),
        ("metered-heartbeat", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.meteredHeartbeatMilliseconds = try ValueParser.duration(value, range: 10_000...7 * 86_400_000) }),
        ("keep-alive", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.keepAliveSeconds = try ValueParser.duration(value, range: 5_000...65_535_000) / 1_000 }),
        ("metered-keep-alive", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.meteredKeepAliveSeconds = try ValueParser.duration(value, range: 5_000...65_535_000) / 1_000 }),
        ("queue-limit", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.queueLimit = try ValueParser.count(value, range: 1...10_000) }),
        ("homeassistant", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.homeAssistant = try ValueParser.boolean(value) }),
        ("discovery-prefix", { (value: String, m: inout MQTTSettings) throws(ValueError) in
            m.discoveryPrefix = try MQTTSettings.topicPrefix(value) }),
    ])
}

/// The broker's user name and password, from `credentials-file`: lines
/// `username = NAME` and `password = SECRET` (comments with '#'). Errors never
/// quote a line, so the password cannot reach a log.
package struct MQTTCredentials: Sendable, Equatable {
    package var username: String
    package var password: String

    package init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    package static func parse(_ text: String, fileName: String) throws(ConfigurationError) -> MQTTCredentials {
        var username: String?
        var password: String?
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.trimmingWhitespace
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(file: fileName, line: number, key: nil, message: "expected 'username = NAME' or 'password = SECRET'")
            }
            let key = line[..<equals].trimmingWhitespace
            let value = line[line.index(after: equals)...].trimmingWhitespace
            guard !value.isEmpty, !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
                throw ConfigurationError(file: fileName, line: number, key: key == "password" ? key : nil,
                                         message: "expected a non-empty value without control characters")
            }
            switch key {
            case "username" where username == nil: username = value
            case "password" where password == nil: password = value
            case "username", "password":
                throw ConfigurationError(file: fileName, line: number, key: key, message: "set twice")
            default:
                throw ConfigurationError(file: fileName, line: number, key: nil, message: "unknown key; expected username or password")
            }
        }
        guard let username, let password else {
            throw ConfigurationError(file: fileName, line: nil, key: username == nil ? "username" : "password", message: "missing")
        }
        return MQTTCredentials(username: username, password: password)
    }
}
