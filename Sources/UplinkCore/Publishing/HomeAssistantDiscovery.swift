/// Home Assistant's MQTT discovery: per uplink a connectivity `binary_sensor` and
/// `sensor`s, one `sensor` for the primary, two for the site's availability today and
/// this month (when the agent keeps a journal), all on one device named by the node id and
/// available while the availability topic says `online`.
package struct HomeAssistantDiscovery: Sendable {
    /// One sensor of an uplink, read from its uplink topic.
    package struct UplinkSensor: Sendable {
        package var key: String
        package var name: String
        package var valueTemplate: String
        package var unit: String?
        package var deviceClass: String?
        package var stateClass: String?
        package var icon: String?

        package init(key: String, name: String, valueTemplate: String, unit: String? = nil,
                    deviceClass: String? = nil, stateClass: String? = nil, icon: String? = nil) {
            self.key = key
            self.name = name
            self.valueTemplate = valueTemplate
            self.unit = unit
            self.deviceClass = deviceClass
            self.stateClass = stateClass
            self.icon = icon
        }
    }

    /// The sensors every uplink has. A figure that is null in the uplink's object
    /// (no RTT measured yet) shows as unknown (`None`).
    package static let uplinkSensors: [UplinkSensor] = [
        UplinkSensor(key: "verdict", name: "verdict", valueTemplate: "{{ value_json.verdict }}", icon: "mdi:web-check"),
        UplinkSensor(key: "rtt", name: "RTT", valueTemplate: "{{ value_json.rtt_ms }}", unit: "ms",
                     deviceClass: "duration", stateClass: "measurement"),
        UplinkSensor(key: "loss", name: "loss", valueTemplate: "{{ value_json.loss_pct }}", unit: "%",
                     stateClass: "measurement", icon: "mdi:lan-disconnect"),
        UplinkSensor(key: "probe_bytes", name: "probe bytes today", valueTemplate: "{{ value_json.bytes_today }}",
                     unit: "B", deviceClass: "data_size", stateClass: "total_increasing"),
    ]

    /// Sensors for the modem's figures (`UplinkStatus.json`'s `modem` object), for the
    /// uplinks `includesModemSensors` names; unknown while the object is null.
    package static let modemSensors: [UplinkSensor] = [
        UplinkSensor(key: "modem_rsrp", name: "RSRP", valueTemplate: modemFigure("rsrp_dbm"), unit: "dBm",
                     deviceClass: "signal_strength", stateClass: "measurement"),
        UplinkSensor(key: "modem_rsrq", name: "RSRQ", valueTemplate: modemFigure("rsrq_db"), unit: "dB",
                     stateClass: "measurement", icon: "mdi:signal"),
        UplinkSensor(key: "modem_signal_quality", name: "signal quality", valueTemplate: modemFigure("signal_quality_pct"),
                     unit: "%", stateClass: "measurement", icon: "mdi:signal-cellular-2"),
        UplinkSensor(key: "modem_registration", name: "registration", valueTemplate: modemFigure("registration"),
                     icon: "mdi:sim"),
        UplinkSensor(key: "modem_operator", name: "operator", valueTemplate: modemFigure("operator"),
                     icon: "mdi:radio-tower"),
    ]

    /// A Jinja template of one of the uplink's modem facts (`modem_KEY`; null without a modem).
    static func modemFigure(_ key: String) -> String {
        "{{ value_json.modem_\(key) }}"
    }

    package let topics: MQTTTopics
    package let version: String

    package init(topics: MQTTTopics, version: String = UplinkVersion.string) {
        self.topics = topics
        self.version = version
    }

    private var device: JSONValue {
        .object([
            ("identifiers", .array([.string("uplinkd_\(topics.node)")])),
            ("name", .string("uplinkd \(topics.node)")),
            ("manufacturer", .string("uplinkd")),
            ("model", .string("uplinkd agent")),
            ("sw_version", .string(version)),
        ])
    }

    private func common(uniqueID: String, name: String, stateTopic: String, valueTemplate: String) -> [(String, JSONValue)] {
        [
            ("name", .string(name)),
            ("unique_id", .string(uniqueID)),
            ("object_id", .string(uniqueID)),
            ("state_topic", .string(stateTopic)),
            ("value_template", .string(valueTemplate)),
            ("availability_topic", .string(topics.availability)),
            ("payload_available", .string(MQTTPayload.online)),
            ("payload_not_available", .string(MQTTPayload.offline)),
            ("device", device),
        ]
    }

    /// Whether an uplink's discovery includes the modem's sensors: cellular ones.
    package static func includesModemSensors(_ uplink: UplinkStatus) -> Bool { uplink.kind == .wwan }

    /// The retained config messages of one uplink.
    package func uplinkConfigs(_ uplink: UplinkStatus) -> [MQTTMessage] {
        let name = uplink.interface.value
        let object = TopicName.identifier(name)
        let stateTopic = topics.uplink(uplink.interface)
        var messages: [MQTTMessage] = []
        let connectivityID = "uplinkd_\(topics.node)_\(object)_connectivity"
        var members = common(uniqueID: connectivityID, name: "\(name) internet", stateTopic: stateTopic,
                             valueTemplate: "{{ 'ON' if value_json.verdict == 'online' else 'OFF' }}")
        members.insert(("device_class", .string("connectivity")), at: 4)
        members.insert(("payload_on", .string("ON")), at: 5)
        members.insert(("payload_off", .string("OFF")), at: 6)
        messages.append(config("binary_sensor", object: "\(object)_connectivity", members))
        let sensors = HomeAssistantDiscovery.uplinkSensors
            + (HomeAssistantDiscovery.includesModemSensors(uplink) ? HomeAssistantDiscovery.modemSensors : [])
        for sensor in sensors {
            let id = "uplinkd_\(topics.node)_\(object)_\(sensor.key)"
            var members = common(uniqueID: id, name: "\(name) \(sensor.name)", stateTopic: stateTopic,
                                 valueTemplate: sensor.valueTemplate)
            if let unit = sensor.unit { members.append(("unit_of_measurement", .string(unit))) }
            if let deviceClass = sensor.deviceClass { members.append(("device_class", .string(deviceClass))) }
            if let stateClass = sensor.stateClass { members.append(("state_class", .string(stateClass))) }
            if let icon = sensor.icon { members.append(("icon", .string(icon))) }
            messages.append(config("sensor", object: "\(object)_\(sensor.key)", members))
        }
        return messages
    }

    /// Empty retained configs: Home Assistant removes the entities.
    package func uplinkRemovals(_ uplink: UplinkStatus) -> [MQTTMessage] {
        uplinkConfigs(uplink).map { MQTTMessage(topic: $0.topic, payload: "", qos: 1, retain: true) }
    }

    /// The primary uplink's sensor, read from `state`.
    package var primaryConfig: MQTTMessage {
        let id = "uplinkd_\(topics.node)_primary"
        var members = common(uniqueID: id, name: "primary uplink", stateTopic: topics.state,
                             valueTemplate: "{{ value_json.primary if value_json.primary else 'none' }}")
        members.append(("icon", .string("mdi:router-network")))
        return config("sensor", object: "primary", members)
    }

    /// The site's availability today and this month, read from the summary.
    package var availabilityConfigs: [MQTTMessage] {
        [("today", "site availability today"), ("month", "site availability this month")].map { key, name in
            let id = "uplinkd_\(topics.node)_availability_\(key)"
            var members = common(uniqueID: id, name: name, stateTopic: topics.summary,
                                 valueTemplate: "{{ value_json.\(key).site.availability_pct }}")
            members += [("unit_of_measurement", .string("%")), ("state_class", .string("measurement")),
                        ("icon", .string("mdi:percent-circle"))]
            return config("sensor", object: "availability_\(key)", members)
        }
    }

    private func config(_ component: String, object: String, _ members: [(String, JSONValue)]) -> MQTTMessage {
        MQTTMessage(topic: topics.discovery(component: component, object: object),
                    payload: JSONValue.object(members).serialized(), qos: 1, retain: true)
    }
}
