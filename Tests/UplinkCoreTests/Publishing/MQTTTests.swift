import Testing
import UplinkCore

// The MQTT push channel's pure half: settings, names, payloads, queue, back-off and
// the decisions of MQTTSession (time as a parameter).

private func uplink(_ name: InterfaceName, _ kind: InterfaceKind = .ethernet, _ verdict: Verdict = .online,
                    metered: Bool = false, rtt: Int? = nil, bytes: Int = 0) -> UplinkStatus {
    UplinkStatus(interface: name, kind: kind, verdict: verdict, reason: verdict == .online ? .validated : .timeout,
                 sinceWallSeconds: 1_000, bytesToday: bytes, metered: metered,
                 quality: UplinkQualityStatus(figures: QualityFigures(roundTripMilliseconds: rtt)))
}

private func state(_ primary: InterfaceName?, _ uplinks: [UplinkStatus], written: Int = 2_000) -> AgentState {
    AgentState(primary: primary, uplinks: uplinks, writtenWallSeconds: written, pid: 42)
}

private func primaryEvent(_ to: InterfaceName?, from: InterfaceName?) -> HookEvent {
    HookEvent(kind: .primary, interface: to, interfaceKind: .ethernet, verdict: .online, previousVerdict: .online,
              reason: .validated, portalURL: nil, primary: to, previousPrimary: from, wallSeconds: 2_000)
}

private func settings(_ change: (inout MQTTSettings) -> Void = { _ in }) -> MQTTSettings {
    var settings = MQTTSettings()
    settings.broker = MQTTBroker(host: "192.0.2.1", port: 1883, tls: false)
    change(&settings)
    return settings
}

@Suite("MQTT settings")
struct MQTTSettingsTests {
    @Test func brokerForms() throws {
        let plain = try MQTTBroker.parse("mqtt://broker.example")
        #expect(plain == MQTTBroker(host: "broker.example", port: 1883, tls: false))
        #expect(try MQTTBroker.parse("mqtts://10.0.0.1") == MQTTBroker(host: "10.0.0.1", port: 8883, tls: true))
        #expect(try MQTTBroker.parse("mqtts://[2001:db8::1]:9000") == MQTTBroker(host: "2001:db8::1", port: 9000, tls: true))
        #expect(try MQTTBroker.parse("mqtts://[2001:db8::1]:9000").description == "mqtts://[2001:db8::1]:9000")
        #expect(try MQTTBroker.parse("mqtt://10.0.0.1").hostIsAddress)
    }

    @Test(arguments: ["http://x", "mqtt://", "mqtt://host:0", "mqtt://host:70000", "mqtt://user@host",
                      "mqtt://host/path", "mqtt://[::1", "mqtt://[10.0.0.1]:1"])
    func badBroker(value: String) {
        expectError("[mqtt]\nbroker = \(value)\n", line: 2, key: "broker")
    }

    @Test func fullSection() throws {
        let configuration = try parse("""
            [mqtt]
            broker = mqtts://broker.example:8884
            ca-file = /etc/uplinkd/ca.pem
            certificate-file = /etc/uplinkd/client.pem
            key-file = /etc/uplinkd/client.key
            credentials-file = /etc/uplinkd/mqtt.credentials
            node-id = gw-17
            topic-prefix = fleet/eu
            heartbeat = 5m
            metered-heartbeat = 6h
            keep-alive = 30s
            metered-keep-alive = 15m
            queue-limit = 50
            homeassistant = yes
            discovery-prefix = ha

            """)
        let mqtt = configuration.mqtt
        #expect(mqtt.enabled && mqtt.broker?.port == 8884 && mqtt.caFilePath == "/etc/uplinkd/ca.pem")
        #expect(mqtt.nodeID == "gw-17" && mqtt.topicPrefix == "fleet/eu" && mqtt.discoveryPrefix == "ha")
        #expect(mqtt.heartbeatMilliseconds == 300_000 && mqtt.meteredHeartbeatMilliseconds == 21_600_000)
        #expect(mqtt.keepAliveSeconds == 30 && mqtt.meteredKeepAliveSeconds == 900 && mqtt.queueLimit == 50)
        #expect(mqtt.homeAssistant)
    }

    @Test func offByDefault() throws {
        #expect(try !parse("[check]\ntimeout = 2s\n").mqtt.enabled)
    }

    @Test func keysThatNeedOthers() {
        expectError("[mqtt]\nnode-id = gw\n", line: 2, key: "node-id", mentioning: "needs broker")
        expectError("[mqtt]\nbroker = mqtt://h\nca-file = /ca.pem\n", line: 3, key: "ca-file", mentioning: "mqtts://")
        expectError("[mqtt]\nbroker = mqtts://h\ncertificate-file = /c.pem\n", line: 3, key: "certificate-file",
                    mentioning: "go together")
        expectError("[mqtt]\nbroker = mqtt://h\nhomeassistant = yes\ntopic-prefix = homeassistant\n", line: nil,
                    key: "discovery-prefix", mentioning: "differ")
    }

    @Test(arguments: [("node-id", "a/b"), ("node-id", "a+b"), ("node-id", ""), ("topic-prefix", "a/+/b"),
                      ("topic-prefix", "$SYS"), ("topic-prefix", "a//b"), ("topic-prefix", "a/"), ("discovery-prefix", "#"),
                      ("heartbeat", "1s"), ("keep-alive", "1s"), ("queue-limit", "0"), ("credentials-file", "relative")])
    func badValues(key: String, value: String) {
        expectError("[mqtt]\nbroker = mqtt://h\n\(key) = \(value)\n", line: 3, key: key)
    }

    @Test func credentialsFile() throws {
        let parsed = try MQTTCredentials.parse("# gateway 17\nusername = gw17\npassword = s3cret = yes\n", fileName: "/c")
        #expect(parsed == MQTTCredentials(username: "gw17", password: "s3cret = yes"))
        for bad in ["username = a\n", "password = a\n", "username = a\npassword = b\npassword = c\n", "user = a\n", "s3cret\n"] {
            do {
                _ = try MQTTCredentials.parse(bad, fileName: "/c")
                Issue.record("accepted \(bad)")
            } catch {
                // The password must never be quoted back.
                #expect(!error.description.contains("s3cret") && !error.description.contains("= b"), "\(error)")
            }
        }
    }
}

@Suite("MQTT names and payloads")
struct MQTTPayloadTests {
    @Test func topicLevels() {
        #expect(TopicName.level("eth0.100") == "eth0.100")
        #expect(TopicName.level("a+b") == "a%2Bb")
        #expect(TopicName.level("a#b") == "a%23b")
        #expect(TopicName.level("a/b") == "a%2Fb")
        #expect(TopicName.level("50%") == "50%25")
        #expect(TopicName.level("x\u{01}") == "x%01")
        // One-to-one: a name that looks like an encoding stays apart from it.
        #expect(TopicName.level("a%2Bb") != TopicName.level("a+b"))
        #expect(TopicName.identifier("eth0.100") == "eth0_2e100")
        #expect(TopicName.identifier("wlan_sta") == "wlan_5fsta")
        #expect(TopicName.identifier("x+y") == "x_2by")
    }

    @Test func nodeIDFromMachineID() {
        #expect(TopicName.nodeID(machineID: "0123456789abcdef0123456789abcdef\n") == "0123456789abcdef0123456789abcdef")
        #expect(TopicName.nodeID(machineID: "uninitialized\n") == nil)
    }

    @Test func statePayloadIsStatusJSON() {
        let s = state("eth0", [uplink("eth0")])
        // Less the two facts for readers on the gateway (a second message per decision).
        let local = s.statusJSON(ageSeconds: 0, running: true).serialized()
            .replacing(#""decision":0,"hooks_done":0,"#, with: "")
        #expect(local.count < s.statusJSON(ageSeconds: 0, running: true).serialized().count)
        #expect(MQTTPayload.state(s) == local)
        #expect(MQTTPayload.uplink(s.uplinks[0]) == s.uplinks[0].json.serialized())
    }

    @Test func eventPayloadCarriesTheHookEnvironment() {
        var event = primaryEvent("wlan0", from: "eth0")
        event.primaryReason = .lost
        let payload = MQTTPayload.event(event, sequence: 7, dropped: 2)
        #expect(payload.hasPrefix("{\"seq\":7,\"dropped\":2,\"event\":\"primary\",\"interface\":\"wlan0\""))
        #expect(payload.contains("\"previous_primary\":\"eth0\"") && payload.contains("\"primary_reason\":\"lost\""))
        // Every variable of the hook environment is there.
        #expect(event.environment.allSatisfy { entry in
            let name = entry.split(separator: "=", maxSplits: 1)[0].dropFirst("UPLINK_".count).lowercased()
            return payload.contains("\"\(name)\":")
        })
    }

    @Test func homeAssistantDiscovery() throws {
        let topics = MQTTTopics(prefix: "uplinkd", node: "gw1", discoveryPrefix: "homeassistant")
        let discovery = HomeAssistantDiscovery(topics: topics, version: "9.9")
        let configs = discovery.uplinkConfigs(uplink("x+y"))
        #expect(configs.count == 1 + HomeAssistantDiscovery.uplinkSensors.count)
        #expect(configs[0].topic == "homeassistant/binary_sensor/gw1/x_2by_connectivity/config")
        #expect(configs.allSatisfy { $0.retain && $0.qos == 1 })
        let binary = try JSONReader.parse(Array(configs[0].payload.utf8))
        #expect(binary["device_class"] == .string("connectivity"))
        #expect(binary["state_topic"] == .string("uplinkd/gw1/uplink/x%2By"))
        #expect(binary["availability_topic"] == .string("uplinkd/gw1/availability"))
        #expect(binary["unique_id"] == .string("uplinkd_gw1_x_2by_connectivity"))
        #expect(binary["device"]?["identifiers"] != nil)
        let removals = discovery.uplinkRemovals(uplink("x+y"))
        #expect(removals.map(\.topic) == configs.map(\.topic) && removals.allSatisfy { $0.payload.isEmpty && $0.retain })
        #expect(discovery.primaryConfig.topic == "homeassistant/sensor/gw1/primary/config")
    }
}

@Suite("MQTT queue and back-off")
struct MQTTQueueTests {
    @Test func boundedQueueKeepsTheNewest() {
        var queue = BoundedQueue<Int>(capacity: 3)
        for value in 1...7 { queue.append(value) }
        #expect(queue.dropped == 4 && queue.count == 3)
        #expect(queue.removeAll() == [5, 6, 7])
        #expect(queue.isEmpty && queue.dropped == 4)
        queue.append(8)
        #expect(queue.removeAll() == [8])
    }

    @Test func backoffDoublesToTenMinutesWithJitter() {
        var backoff = ReconnectBackoff()
        var ceilings: [Int] = []
        var lowest: [Int] = []
        for _ in 0..<14 {
            ceilings.append(backoff.ceilingMilliseconds)
            var copy = backoff
            lowest.append(copy.nextDelayMilliseconds(random: { _ in 0 }))
            _ = backoff.nextDelayMilliseconds(random: { $0 - 1 })
        }
        #expect(Array(ceilings.prefix(6)) == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000])
        #expect(ceilings.last == 600_000)
        #expect(lowest[0] == 500 && lowest.last == 300_000)
        backoff.reset()
        #expect(backoff.ceilingMilliseconds == 1_000)
        // The random source decides within the upper half.
        var jittered = ReconnectBackoff()
        #expect(jittered.nextDelayMilliseconds(random: { $0 / 2 }) == 750)
    }
}

@Suite("MQTT session")
struct MQTTSessionTests {
    @Test func connectPublishesAvailabilityStateUplinksAndQueuedEvents() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        #expect(session.will == MQTTMessage(topic: "uplinkd/gw1/availability", payload: "offline", qos: 1, retain: true))
        let output = session.changed(state("eth0", [uplink("eth0"), uplink("wlan0", .wifi)]),
                                     events: [primaryEvent("eth0", from: nil)], now: 0)
        #expect(output.messages.isEmpty && session.queuedEvents == 1)
        let messages = session.connected(through: nil, now: 1_000)
        // What happened while away comes right after `online`: the failover an
        // operator most needs is the first news of the new connection.
        #expect(messages.map(\.topic) == ["uplinkd/gw1/availability", "uplinkd/gw1/event", "uplinkd/gw1/state",
                                          "uplinkd/gw1/uplink/eth0", "uplinkd/gw1/uplink/wlan0"])
        #expect(messages[0].payload == "online" && messages[0].retain)
        #expect(messages[1].retain == false && messages[1].qos == 1)
        #expect(session.queuedEvents == 0)
    }

    @Test func figuresAloneWaitForTheHeartbeat() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        _ = session.changed(state("eth0", [uplink("eth0", rtt: 10)]), events: [], now: 0)
        _ = session.connected(through: nil, now: 0)
        #expect(session.nextHeartbeatMilliseconds == 15 * 60_000)
        // RTT and probe bytes moved: nothing yet.
        let quiet = session.changed(state("eth0", [uplink("eth0", rtt: 12, bytes: 900)], written: 2_100), events: [], now: 60_000)
        #expect(quiet.messages.isEmpty)
        // A verdict change goes out at once: state and that uplink.
        let loud = session.changed(state(nil, [uplink("eth0", .ethernet, .limited)]), events: [], now: 120_000)
        #expect(loud.messages.map(\.topic) == ["uplinkd/gw1/state", "uplinkd/gw1/uplink/eth0"])
        #expect(session.nextHeartbeatMilliseconds == 120_000 + 15 * 60_000)
        // The heartbeat refreshes state, and an uplink only when its figures moved.
        _ = session.changed(state(nil, [uplink("eth0", .ethernet, .limited, rtt: 30)]), events: [], now: 130_000)
        let beat = session.heartbeat(now: 1_020_000)
        #expect(beat.map(\.topic) == ["uplinkd/gw1/state", "uplinkd/gw1/uplink/eth0"])
        #expect(session.heartbeat(now: 1_920_000).map(\.topic) == ["uplinkd/gw1/state"])
    }

    @Test func aPrimaryThatBecomesMeteredGetsAConnectionWithItsKeepAlive() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        // Connected at start, before any primary: the unmetered keep-alive.
        _ = session.connected(through: nil, keepAliveSeconds: 60, now: 0)
        let metered = session.changed(state("wwan0", [uplink("wwan0", .wwan, metered: true)]), events: [], now: 1_000)
        #expect(metered.reconnect && session.keepAliveSeconds == 25 * 60)
        session.disconnected()
        _ = session.connected(through: nil, keepAliveSeconds: 25 * 60, now: 2_000)
        #expect(!session.changed(state("wwan0", [uplink("wwan0", .wwan, metered: true, rtt: 9)]), events: [], now: 3_000).reconnect)
    }

    @Test func meteredPrimaryUsesTheLeanSettings() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        #expect(session.keepAliveSeconds == 60 && session.heartbeatMilliseconds == 15 * 60_000)
        _ = session.changed(state("wwan0", [uplink("wwan0", .wwan, metered: true)]), events: [], now: 0)
        #expect(session.keepAliveSeconds == 25 * 60 && session.heartbeatMilliseconds == 12 * 3_600_000)
        _ = session.connected(through: nil, now: 0)
        _ = session.changed(state("wwan0", [uplink("wwan0", .wwan, metered: true, rtt: 80)]), events: [], now: 10)
        // The heartbeat is `state` alone: the moved RTT is in it.
        #expect(session.heartbeat(now: 12 * 3_600_000).map(\.topic) == ["uplinkd/gw1/state"])
    }

    @Test func eventsWhileAwayAreBoundedAndKeepTheirOrder() throws {
        var session = MQTTSession(settings: settings { $0.queueLimit = 2 }, nodeID: "gw1")
        _ = session.connected(through: nil, now: 0)
        session.disconnected()
        let s = state("eth0", [uplink("eth0")])
        for (index, name) in (["eth0", "wlan0", "wwan0", "eth1"] as [InterfaceName]).enumerated() {
            _ = session.changed(s, events: [primaryEvent(name, from: nil)], now: index)
        }
        #expect(session.droppedEvents == 2)
        let events = session.connected(through: nil, now: 10).filter { $0.topic == "uplinkd/gw1/event" }
        #expect(events.count == 2)
        #expect(events[0].payload.hasPrefix("{\"seq\":3,\"dropped\":2,\"event\":\"primary\",\"interface\":\"wwan0\""))
        #expect(events[1].payload.hasPrefix("{\"seq\":4,\"dropped\":2,\"event\":\"primary\",\"interface\":\"eth1\""))
    }

    @Test func aConnectionThroughTheOldPrimaryIsMadeAgain() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        _ = session.changed(state("eth0", [uplink("eth0"), uplink("wlan0", .wifi)]), events: [], now: 0)
        _ = session.connected(through: "eth0", now: 0)
        let output = session.changed(state("wlan0", [uplink("eth0", .ethernet, .down), uplink("wlan0", .wifi)]),
                                     events: [primaryEvent("wlan0", from: "eth0")], now: 1_000)
        #expect(output.reconnect && output.messages.isEmpty && session.queuedEvents == 1)
        // Through a LAN interface (not an uplink), a failover keeps the connection.
        var lan = MQTTSession(settings: settings(), nodeID: "gw1")
        _ = lan.changed(state("eth0", [uplink("eth0"), uplink("wlan0", .wifi)]), events: [], now: 0)
        _ = lan.connected(through: "br-lan", now: 0)
        let kept = lan.changed(state("wlan0", [uplink("eth0", .ethernet, .down), uplink("wlan0", .wifi)]),
                               events: [primaryEvent("wlan0", from: "eth0")], now: 1_000)
        #expect(!kept.reconnect && kept.messages.contains { $0.topic == "uplinkd/gw1/event" })
    }

    @Test func aConnectionMadeBeforeThereWasAPrimaryIsMadeAgainThroughTheFirst() {
        // The agent's first connect comes before any round finished: the kernel's
        // routes took it, bound to no uplink, and nothing else would ever move it.
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        _ = session.connected(through: nil, awaitingPrimary: true, now: 0)
        let first = session.changed(state(nil, [uplink("eth0", .ethernet, .unknown)]), events: [], now: 500)
        #expect(!first.reconnect)
        let chosen = session.changed(state("eth0", [uplink("eth0")]), events: [primaryEvent("eth0", from: nil)], now: 1_000)
        #expect(chosen.reconnect && session.queuedEvents == 1)
        // Made again through eth0: the next change keeps it.
        _ = session.connected(through: "eth0", now: 1_100)
        #expect(!session.changed(state("eth0", [uplink("eth0"), uplink("wlan0", .wifi)]), events: [], now: 2_000).reconnect)
    }

    @Test func aConnectionBoundToAnUplinkThePrimaryLeftWhileItWasMadeIsMadeAgain() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        _ = session.changed(state("wlan0", [uplink("eth0", .ethernet, .down), uplink("wlan0", .wifi)]), events: [], now: 0)
        // The relay bound it to eth0 just before the primary moved.
        _ = session.connected(through: "eth0", now: 100)
        let output = session.changed(state("wlan0", [uplink("eth0", .ethernet, .down), uplink("wlan0", .wifi)]),
                                     events: [], now: 1_000)
        #expect(output.reconnect)
    }

    @Test func aFloodOfBirthMessagesIsAnsweredOncePerWindowAfterItsJitter() {
        var session = MQTTSession(settings: settings { $0.homeAssistant = true }, nodeID: "gw1")
        _ = session.changed(state("eth0", [uplink("eth0"), uplink("wwan0", .wwan)]), events: [], now: 0)
        _ = session.connected(through: nil, now: 0)
        let window = MQTTSession.rediscoveryWindowMilliseconds
        var sent: [(at: Int, count: Int)] = []
        // 2,000 births within a second, then one every 10 ms for a minute and a half:
        // the first asks for an announcement 1.2 s later, the rest wait out the window.
        var now = 1_000
        for k in 0..<2_000 {
            session.received(topic: "homeassistant/status", payload: "online", now: now + k / 2, jitterMilliseconds: 1_200)
        }
        #expect(session.nextRediscoveryMilliseconds == 2_200)
        while now < 91_000 {
            now += 10
            session.received(topic: "homeassistant/status", payload: "online", now: now, jitterMilliseconds: 4_000)
            let messages = session.rediscovery(now: now)
            if !messages.isEmpty { sent.append((now, messages.count)) }
        }
        let all = 1 + 2 * (1 + HomeAssistantDiscovery.uplinkSensors.count) + HomeAssistantDiscovery.modemSensors.count
        #expect(sent.map(\.at) == [2_200, 2_200 + window + 4_000, 2_200 + 2 * (window + 4_000)])
        #expect(sent.allSatisfy { $0.count == all })
        // A jitter beyond the bound is held to it; disconnected when due, nothing goes.
        var quiet = MQTTSession(settings: settings { $0.homeAssistant = true }, nodeID: "gw1")
        _ = quiet.connected(through: nil, now: 0)
        quiet.received(topic: "homeassistant/status", payload: "online", now: 0, jitterMilliseconds: 1_000_000)
        #expect(quiet.nextRediscoveryMilliseconds == MQTTSession.rediscoveryJitterMilliseconds)
        quiet.disconnected()
        #expect(quiet.rediscovery(now: 1_000_000).isEmpty && quiet.nextRediscoveryMilliseconds == nil)
    }

    @Test func homeAssistantConfigsOnceAndRemovedWhenAnUplinkIsGoneForGood() {
        var session = MQTTSession(settings: settings { $0.homeAssistant = true }, nodeID: "gw1")
        #expect(session.subscriptions == ["homeassistant/status"])
        _ = session.changed(state("eth0", [uplink("eth0"), uplink("wwan0", .wwan)]), events: [], now: 0)
        let first = session.connected(through: nil, now: 0)
        let perUplink = 1 + HomeAssistantDiscovery.uplinkSensors.count
        // wwan0, cellular, has the modem's sensors too.
        let modem = HomeAssistantDiscovery.modemSensors.count
        #expect(modem == 5)
        #expect(first.filter { $0.topic.hasPrefix("homeassistant/") }.count == 1 + 2 * perUplink + modem)
        // A reconnect does not send them again; Home Assistant's birth message does.
        session.disconnected()
        #expect(!session.connected(through: nil, now: 10).contains { $0.topic.hasPrefix("homeassistant/") })
        session.received(topic: "homeassistant/status", payload: "online", now: 20, jitterMilliseconds: 0)
        #expect(session.rediscovery(now: 20).count == 1 + 2 * perUplink + modem)
        session.received(topic: "homeassistant/status", payload: "offline", now: 30, jitterMilliseconds: 0)
        #expect(session.nextRediscoveryMilliseconds == nil)
        // wwan0 vanishes: kept for a while (a modem reset), then its retained topics go.
        let gone = state("eth0", [uplink("eth0")])
        #expect(session.changed(gone, events: [], now: 1_000).messages.filter { $0.payload.isEmpty }.isEmpty)
        let removals = session.changed(gone, events: [primaryEvent("eth0", from: nil)],
                                       now: 1_000 + session.vanishedAfterMilliseconds).messages.filter { $0.payload.isEmpty }
        #expect(removals.count == 1 + perUplink + modem)
        #expect(removals.contains { $0.topic == "uplinkd/gw1/uplink/wwan0" })
        #expect(removals.allSatisfy { $0.retain })
    }

    @Test func stopSendsFinalStateEventThenOffline() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        _ = session.changed(state("eth0", [uplink("eth0")]), events: [], now: 0)
        _ = session.connected(through: nil, now: 0)
        var final = state("eth0", [uplink("eth0")])
        final.stopped = true
        let stop = HookEvent(kind: .stop, interface: "eth0", interfaceKind: .ethernet, verdict: .online,
                             previousVerdict: .online, reason: .validated, portalURL: nil, primary: nil,
                             previousPrimary: "eth0", wallSeconds: 3_000)
        let messages = session.stopping(final, event: stop, now: 5_000)
        #expect(messages.map(\.topic) == ["uplinkd/gw1/state", "uplinkd/gw1/event", "uplinkd/gw1/availability"])
        #expect(messages[0].payload.contains("\"stopped\":true") && messages[2].payload == "offline")
    }

    @Test func protocolFallback() {
        var session = MQTTSession(settings: settings(), nodeID: "gw1")
        #expect(session.protocolVersion == 5)
        #expect(MQTTSession.refusesProtocol(connackCode: 0x84) && MQTTSession.refusesProtocol(connackCode: 1))
        #expect(!MQTTSession.refusesProtocol(connackCode: 0x87))
        session.disconnected(refusedProtocol: true)
        #expect(session.protocolVersion == 4)
    }
}
