/// Names made safe for MQTT topics and Home Assistant ids. Kernel interface names may
/// hold `+` and `#` (MQTT's wildcards), and the names of other sources may hold `/`
/// (a topic level) or control bytes; each encoding is one-to-one, so two interfaces
/// never share a topic.
package enum TopicName {
    /// One topic level: letters, digits, `.`, `_` and `-` as they are, every other
    /// byte (`%` included) as `%XX`. `eth0.100` stays `eth0.100`; `a+b` is `a%2Bb`.
    package static func level(_ name: String) -> String {
        var out = ""
        for byte in name.utf8 {
            if isIdentifierByte(byte) || byte == UInt8(ascii: ".") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + hex(byte)
            }
        }
        return out
    }

    /// An id for Home Assistant (object ids and unique ids allow letters, digits, `_`
    /// and `-` only): letters, digits and `-` as they are, every other byte (`_`
    /// included) as `_xx`. `eth0.100` is `eth0_2e100`.
    package static func identifier(_ name: String) -> String {
        var out = ""
        for byte in name.utf8 {
            if isIdentifierByte(byte) && byte != UInt8(ascii: "_") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "_" + hex(byte).lowercased()
            }
        }
        return out
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
    }

    /// A node id from the machine id (`/etc/machine-id`: 32 hex digits), or nil when
    /// the text is not one.
    package static func nodeID(machineID text: String) -> String? {
        let id = text.trimmingWhitespace
        guard id.utf8.count == 32, id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            return nil
        }
        return id
    }
}

/// The topics of one gateway: `PREFIX/NODE/...` and Home Assistant's discovery topics.
package struct MQTTTopics: Sendable, Equatable {
    package let prefix: String
    package let node: String
    package let discoveryPrefix: String

    package init(prefix: String, node: String, discoveryPrefix: String) {
        self.prefix = prefix
        self.node = node
        self.discoveryPrefix = discoveryPrefix
    }

    package var base: String { "\(prefix)/\(node)" }
    /// Retained `online`; the last will and a clean stop say `offline`.
    package var availability: String { "\(base)/availability" }
    /// Retained: `status --json`'s object.
    package var state: String { "\(base)/state" }
    /// Not retained, QoS 1: one message per hook event.
    package var event: String { "\(base)/event" }
    /// Not retained, QoS 1: the outage journal's records, each until acknowledged.
    package var journal: String { "\(base)/journal" }
    /// Retained: the availability of the site and each uplink today and this month.
    package var summary: String { "\(base)/summary" }
    /// Retained: one uplink's object.
    package func uplink(_ name: InterfaceName) -> String { "\(base)/uplink/\(TopicName.level(name.value))" }

    /// Home Assistant's birth message topic: a restarted Home Assistant says
    /// `online` there, and discovery is sent again (its broker may have lost it).
    package var homeAssistantStatus: String { "\(discoveryPrefix)/status" }

    /// `DISCOVERY/COMPONENT/NODE/OBJECT/config`.
    package func discovery(component: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(node)/\(object)/config"
    }
}
