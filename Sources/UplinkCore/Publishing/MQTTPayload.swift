/// One MQTT message to send.
package struct MQTTMessage: Sendable, Equatable, CustomStringConvertible {
    package var topic: String
    /// UTF-8 text (JSON or a word); empty: removes a retained message.
    package var payload: String
    package var qos: Int
    package var retain: Bool

    package init(topic: String, payload: String, qos: Int, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    package var description: String { "\(topic) (\(payload.utf8.count) bytes, qos \(qos)\(retain ? ", retained" : ""))" }
}

/// The payloads the agent publishes. Every object comes from an encoder the rest of
/// the agent already uses: `state` is `status --json`'s, an uplink is one element of
/// its `uplinks`, an event is the hook environment.
package enum MQTTPayload {
    package static let online = "online"
    package static let offline = "offline"

    /// `status --json`'s object as the running agent sees it, without `decision` and
    /// `hooks_done`: they tell a reader on the gateway when the routes caught up, and
    /// would cost a second message per decision (events carry their `decision`).
    package static func state(_ state: AgentState) -> String {
        guard case .object(let members) = state.statusJSON(ageSeconds: 0, running: !state.stopped) else { return "" }
        return JSONValue.object(members.filter { !localFacts.contains($0.0) }).serialized()
    }

    static let localFacts: Set<String> = ["decision", "hooks_done"]

    package static func uplink(_ uplink: UplinkStatus) -> String {
        uplink.json.serialized()
    }

    /// The hook environment as an object: `UPLINK_FOO_BAR=x` becomes `"foo_bar":"x"`
    /// (empty stays empty, as hooks see it), after `seq` (the agent's count of events
    /// since start, so a gap shows a lost message) and `dropped` (events dropped from
    /// the full queue while the broker was away, since start).
    package static func event(_ event: HookEvent, sequence: Int, dropped: Int) -> String {
        var members: [(String, JSONValue)] = [("seq", .int(sequence)), ("dropped", .int(dropped))]
        for entry in event.environment {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            var name = entry[..<equals]
            if name.hasPrefix("UPLINK_") { name = name.dropFirst("UPLINK_".count) }
            members.append((name.lowercased(), .string(String(entry[entry.index(after: equals)...]))))
        }
        return JSONValue.object(members).serialized()
    }
}
