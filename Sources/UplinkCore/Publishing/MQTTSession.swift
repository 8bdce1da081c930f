/// What the agent publishes over MQTT, and when: the pure half of the MQTT client (the
/// adapter owns the socket and the timers and asks this type what to send). Time is a
/// parameter (monotonic milliseconds).
///
/// - At connect: `availability` `online`, `state`, every uplink, the Home Assistant
///   configs not yet sent, then the events that waited, oldest first.
/// - On a change of the state: `state` and the uplinks whose facts changed (verdict,
///   reason, primary, metered, degraded, ...); the figures that move every round (RTT,
///   loss, probe bytes, flap penalty) ride along but do not trigger a message.
/// - On every hook event: one `event` message (QoS 1), queued while disconnected.
/// - Heartbeat: `state` again (its `written` says it is fresh) and the uplinks whose
///   figures moved, every `heartbeat`; on a metered primary `state` alone, every
///   `metered-heartbeat`.
/// - At stop: the final state, the stop event and `offline`.
package struct MQTTSession: Sendable {
    /// What the adapter does after a change.
    package struct Output: Sendable, Equatable {
        package var messages: [MQTTMessage] = []
        /// The connection goes through an uplink that is no longer the primary: its
        /// packets now leave through another interface with the old source address,
        /// so it is dead; connect again (through the new primary).
        package var reconnect = false
    }

    package let settings: MQTTSettings
    package let topics: MQTTTopics
    private let discovery: HomeAssistantDiscovery?
    /// How long an uplink must be gone before its retained topics are removed (an
    /// interface that comes back after a modem reset keeps its entities).
    package var vanishedAfterMilliseconds = 10 * 60_000
    /// The agent keeps a journal: the availability summary is published (by the
    /// adapter), and Home Assistant gets its two sensors.
    package var announcesAvailability = false

    package private(set) var connected = false
    /// The MQTT version of the next connect: 5 until a broker refuses it, then 4 (3.1.1).
    package private(set) var protocolVersion = 5
    private var state: AgentState?
    private var queue: BoundedQueue<QueuedEvent>
    private var sequence = 0
    /// What was last published to each retained topic in this run (uplinks and
    /// discovery), and the state's content then.
    private var published: [String: String] = [:]
    private var publishedUplinks: [InterfaceName: UplinkStatus] = [:]
    private var publishedState: AgentState?
    private var lastStateMilliseconds: Int?
    /// Uplinks published once and gone since, with when they went.
    private var vanished: [InterfaceName: (since: Int, uplink: UplinkStatus)] = [:]
    /// The uplink whose address the connection uses, when it is one.
    private var connectionUplink: InterfaceName?
    /// The connection was made by the kernel's routes while there was no primary.
    private var connectionAwaitsPrimary = false
    /// The keep-alive the connection was made with.
    private var connectionKeepAliveSeconds: Int?
    /// The Home Assistant announcement waiting for its time, and the last one sent.
    private var rediscoveryDueMilliseconds: Int?
    private var lastRediscoveryMilliseconds: Int?

    private struct QueuedEvent: Sendable {
        var event: HookEvent
        var sequence: Int
    }

    package init(settings: MQTTSettings, nodeID: String) {
        self.settings = settings
        topics = MQTTTopics(prefix: settings.topicPrefix, node: nodeID, discoveryPrefix: settings.discoveryPrefix)
        discovery = settings.homeAssistant ? HomeAssistantDiscovery(topics: topics) : nil
        queue = BoundedQueue(capacity: settings.queueLimit)
    }

    /// The last will, set before every connect.
    package var will: MQTTMessage {
        MQTTMessage(topic: topics.availability, payload: MQTTPayload.offline, qos: 1, retain: true)
    }

    /// Topics to subscribe to after a connect: Home Assistant's birth message.
    package var subscriptions: [String] { discovery == nil ? [] : [topics.homeAssistantStatus] }

    /// Events dropped from the full queue since start.
    package var droppedEvents: Int { queue.dropped }
    package var queuedEvents: Int { queue.count }

    /// Whether the primary is metered (cellular, or said so): the byte-lean settings.
    package var primaryIsMetered: Bool {
        guard let state, let primary = state.primary else { return false }
        return state.uplinks.first { $0.interface == primary }?.metered ?? false
    }

    /// The keep-alive of the next connect.
    package var keepAliveSeconds: Int {
        primaryIsMetered ? settings.meteredKeepAliveSeconds : settings.keepAliveSeconds
    }

    package var heartbeatMilliseconds: Int {
        primaryIsMetered ? settings.meteredHeartbeatMilliseconds : settings.heartbeatMilliseconds
    }

    /// When the heartbeat is due (monotonic), while connected with a state to send.
    package var nextHeartbeatMilliseconds: Int? {
        guard connected, let last = lastStateMilliseconds else { return nil }
        return last + heartbeatMilliseconds
    }

    // MARK: connection

    /// The broker accepted the connection, which uses the address of `through` (nil:
    /// not an uplink's, e.g. a LAN broker) and the keep-alive given at its CONNECT
    /// (nil: the one this session would choose now). `awaitingPrimary`: it reaches an
    /// internet broker by the kernel's routes because no primary was chosen yet, and
    /// is made again through the first primary.
    package mutating func connected(through uplink: InterfaceName?, awaitingPrimary: Bool = false,
                                   keepAliveSeconds: Int? = nil, now: Int) -> [MQTTMessage] {
        connected = true
        connectionUplink = uplink
        connectionAwaitsPrimary = awaitingPrimary && uplink == nil
        connectionKeepAliveSeconds = keepAliveSeconds ?? self.keepAliveSeconds
        // What happened while away (the failover this connection was made after) goes
        // first: it is what the operator most needs, and a small message.
        var messages = [MQTTMessage(topic: topics.availability, payload: MQTTPayload.online, qos: 1, retain: true)]
        messages += drainEvents()
        if let discovery {
            let configs = [discovery.primaryConfig] + (announcesAvailability ? discovery.availabilityConfigs : [])
            messages += remember(configs.filter { published[$0.topic] == nil })
        }
        if let state {
            messages += stateMessages(state, force: true, now: now)
        }
        return messages
    }

    /// The connection is made but not through the primary the session knows of: one
    /// made before there was a primary, or bound to an uplink the primary left while
    /// it was being made. (A connection through a LAN interface is where it belongs.)
    package var wantsNewConnection: Bool {
        guard connected, let state, let primary = state.primary else { return false }
        if let through = connectionUplink {
            return through != primary && state.uplinks.contains { $0.interface == through }
        }
        return connectionAwaitsPrimary
    }

    /// The connection ended or could not be made. `refusedProtocol`: the broker said
    /// it does not speak this MQTT version (an MQTT 3.1.1 broker answering a 5
    /// CONNECT); the next connect uses 3.1.1.
    package mutating func disconnected(refusedProtocol: Bool = false) {
        connected = false
        connectionUplink = nil
        connectionAwaitsPrimary = false
        connectionKeepAliveSeconds = nil
        if refusedProtocol && protocolVersion == 5 { protocolVersion = 4 }
    }

    /// CONNACK codes that say "not this protocol version": 1 in MQTT 3.1.1, 0x84 in 5.
    package static func refusesProtocol(connackCode: Int) -> Bool { connackCode == 1 || connackCode == 0x84 }

    // MARK: changes

    /// The agent published a new state, with the hook events of that change.
    package mutating func changed(_ state: AgentState, events: [HookEvent], now: Int) -> Output {
        var output = Output()
        let previousPrimary = self.state?.primary
        self.state = state
        for event in events {
            sequence += 1
            queue.append(QueuedEvent(event: event, sequence: sequence))
        }
        noteVanished(state, now: now)
        guard connected else { return output }
        // Made through an uplink the primary left, or (`wantsNewConnection`) one that
        // is not the primary, or before there was a primary: the events wait in the
        // queue for a connection through the primary.
        let left = connectionUplink.map { previousPrimary == $0 && state.primary != $0 } ?? false
        if left || wantsNewConnection {
            output.reconnect = true
            return output
        }
        if let inUse = connectionKeepAliveSeconds, inUse != keepAliveSeconds {
            // The primary became metered (or stopped being so): the keep-alive is
            // fixed at CONNECT, and on a metered primary its pings are most of the
            // monthly bytes. One new connection (a handshake) settles it.
            output.reconnect = true
            return output
        }
        output.messages = stateMessages(state, force: false, now: now) + drainEvents() + removals(now: now)
        return output
    }

    /// The heartbeat timer fired.
    package mutating func heartbeat(now: Int) -> [MQTTMessage] {
        guard connected, let state else { return [] }
        var messages = [MQTTMessage(topic: topics.state, payload: MQTTPayload.state(state), qos: 1, retain: true)]
        publishedState = state
        lastStateMilliseconds = now
        // On a metered primary the heartbeat is `state` alone: the uplinks' figures
        // are in it too, and their own topics would double its bytes.
        for uplink in state.uplinks where !primaryIsMetered {
            let payload = MQTTPayload.uplink(uplink)
            let topic = topics.uplink(uplink.interface)
            if published[topic] != payload {
                messages += remember([MQTTMessage(topic: topic, payload: payload, qos: 1, retain: true)])
                publishedUplinks[uplink.interface] = uplink
            }
        }
        return messages + removals(now: now)
    }

    /// A message on a subscribed topic: Home Assistant came (back) online, so its
    /// entities are announced again, `jitterMilliseconds` later (the adapter's random
    /// pick below `rediscoveryJitterMilliseconds`) and never twice within
    /// `rediscoveryWindowMilliseconds`: a restarted Home Assistant sends one birth
    /// message, but a looping client or a broker replaying them sends thousands, to
    /// every gateway at once and over metered uplinks. Births while an announcement
    /// waits change nothing; the next one after it waits out the window.
    package mutating func received(topic: String, payload: String, now: Int, jitterMilliseconds: Int) {
        guard connected, discovery != nil, topic == topics.homeAssistantStatus, payload == MQTTPayload.online,
              rediscoveryDueMilliseconds == nil else { return }
        let jitter = min(max(0, jitterMilliseconds), MQTTSession.rediscoveryJitterMilliseconds)
        let windowEnd = lastRediscoveryMilliseconds.map { $0 + MQTTSession.rediscoveryWindowMilliseconds } ?? now
        rediscoveryDueMilliseconds = max(now, windowEnd) + jitter
    }

    package static let rediscoveryWindowMilliseconds = 30_000
    package static let rediscoveryJitterMilliseconds = 5_000

    /// When the announcement that a birth message asked for is due (monotonic).
    package var nextRediscoveryMilliseconds: Int? { rediscoveryDueMilliseconds }

    /// The announcement a birth message asked for, once due: every discovery config.
    /// Disconnected by then, nothing: the configs are retained at the broker, and the
    /// next connect sends those not yet sent.
    package mutating func rediscovery(now: Int) -> [MQTTMessage] {
        guard let due = rediscoveryDueMilliseconds, now >= due else { return [] }
        rediscoveryDueMilliseconds = nil
        guard connected, let discovery else { return [] }
        lastRediscoveryMilliseconds = now
        var messages = [discovery.primaryConfig] + (announcesAvailability ? discovery.availabilityConfigs : [])
        for uplink in state?.uplinks ?? [] { messages += discovery.uplinkConfigs(uplink) }
        return remember(messages)
    }

    /// The agent stops: the final state, the stop event, then `offline` (the will is
    /// for deaths without a goodbye).
    package mutating func stopping(_ final: AgentState, event: HookEvent?, now: Int) -> [MQTTMessage] {
        let output = changed(final, events: event.map { [$0] } ?? [], now: now)
        guard connected else { return [] }
        var messages = output.messages
        if !messages.contains(where: { $0.topic == topics.state }) {
            messages.append(MQTTMessage(topic: topics.state, payload: MQTTPayload.state(final), qos: 1, retain: true))
        }
        return messages + [MQTTMessage(topic: topics.availability, payload: MQTTPayload.offline, qos: 1, retain: true)]
    }

    // MARK: parts

    private mutating func stateMessages(_ state: AgentState, force: Bool, now: Int) -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        if force || publishedState.map({ !MQTTSession.sameFacts($0, state) }) ?? true {
            messages.append(MQTTMessage(topic: topics.state, payload: MQTTPayload.state(state), qos: 1, retain: true))
            publishedState = state
            lastStateMilliseconds = now
        }
        for uplink in state.uplinks {
            let topic = topics.uplink(uplink.interface)
            if let discovery {
                let configs = discovery.uplinkConfigs(uplink)
                if configs.contains(where: { published[$0.topic] != $0.payload }) { messages += remember(configs) }
            }
            let before = publishedUplinks[uplink.interface]
            if force || before.map({ !MQTTSession.sameFacts($0, uplink) }) ?? true {
                messages += remember([MQTTMessage(topic: topic, payload: MQTTPayload.uplink(uplink), qos: 1, retain: true)])
                publishedUplinks[uplink.interface] = uplink
            }
        }
        return messages
    }

    private mutating func drainEvents() -> [MQTTMessage] {
        let dropped = queue.dropped
        return queue.removeAll().map {
            MQTTMessage(topic: topics.event, payload: MQTTPayload.event($0.event, sequence: $0.sequence, dropped: dropped),
                        qos: 1, retain: false)
        }
    }

    private mutating func noteVanished(_ state: AgentState, now: Int) {
        let present = Set(state.uplinks.map(\.interface))
        for name in present { vanished[name] = nil }
        for (name, uplink) in publishedUplinks where !present.contains(name) && vanished[name] == nil {
            vanished[name] = (now, uplink)
        }
    }

    /// Uplinks gone for `vanishedAfterMilliseconds`: their retained topics emptied.
    private mutating func removals(now: Int) -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        for (name, gone) in vanished.sorted(by: { $0.key < $1.key }) where now - gone.since >= vanishedAfterMilliseconds {
            vanished[name] = nil
            publishedUplinks[name] = nil
            var topics = [self.topics.uplink(name)]
            if let discovery { topics += discovery.uplinkRemovals(gone.uplink).map(\.topic) }
            for topic in topics where published[topic] != nil {
                published[topic] = nil
                messages.append(MQTTMessage(topic: topic, payload: "", qos: 1, retain: true))
            }
        }
        return messages
    }

    /// The availability summary, retained; nil when it says what was last sent.
    package mutating func summary(_ payload: String) -> MQTTMessage? {
        guard connected, published[topics.summary] != payload else { return nil }
        return remember([MQTTMessage(topic: topics.summary, payload: payload, qos: 1, retain: true)]).first
    }

    private mutating func remember(_ messages: [MQTTMessage]) -> [MQTTMessage] {
        for message in messages { published[message.topic] = message.payload }
        return messages
    }

    /// The same state apart from figures that move every round.
    static func sameFacts(_ a: AgentState, _ b: AgentState) -> Bool {
        a.primary == b.primary && a.stopped == b.stopped && a.familyPrimaries == b.familyPrimaries
            && a.uplinks.count == b.uplinks.count && zip(a.uplinks, b.uplinks).allSatisfy { sameFacts($0, $1) }
    }

    static func sameFacts(_ a: UplinkStatus, _ b: UplinkStatus) -> Bool {
        withoutFigures(a) == withoutFigures(b)
    }

    private static func withoutFigures(_ uplink: UplinkStatus) -> UplinkStatus {
        var copy = uplink
        copy.bytesToday = 0
        copy.quality.figures = QualityFigures()
        copy.quality.flapPenalty = 0
        copy.session.bytesRemaining = nil
        return copy
    }
}
