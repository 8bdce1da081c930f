import Glibc
import UplinkCore

/// The MQTT push channel of a running agent (`[mqtt]`): attached from outside the
/// agent (it observes the agent's published changes and its stop), it keeps one
/// libmosquitto connection on the agent's loop and asks `MQTTSession` what to send.
/// A broker that is away costs the agent nothing but a timer: every call here is
/// non-blocking, and a failure is logged (once until it changes) and retried with
/// `ReconnectBackoff`.
package final class MQTTBridge {
    private let loop: EventLoop
    private let broker: MQTTBroker
    private var session: MQTTSession
    private let connection: MQTTConnection
    private var backoff = ReconnectBackoff()
    private let random: RandomSource
    private var reconnectTimer: EventLoop.TimerID?
    private var heartbeatTimer: EventLoop.TimerID?
    /// Home Assistant's announcement, due after a birth message (`MQTTSession`).
    private var rediscoveryTimer: EventLoop.TimerID?
    /// Whether a CONNACK came for the current attempt (a failure before it is a
    /// failure to connect; after it, a lost connection).
    private var acknowledged = false
    /// The broker cannot be reached or refuses (told when it starts, hourly, and when connected again).
    private var unreachable = RecurringCondition()
    private var stopping = false
    /// Called once the goodbye was written (or the time for it ran out).
    private var stopDone: (() -> Void)?
    /// Names of the uplinks' interfaces by index, for "which uplink does the
    /// connection use" (its local address's interface) without the relay.
    private let interfaceOfAddress: (IPAddress) -> String?
    /// The agent's own connection to the broker (nil in tests that use none).
    private var relay: OwnTrafficRelay?
    /// The journal's records until the broker has them (nil: the agent keeps no
    /// journal), and the file of the delivered mark (nil: the journal is not on disk).
    private var delivery: JournalDelivery?
    private var deliveredPath: String?
    /// Journal records handed to the client, by message id.
    private var journalMessages: [Int: Int] = [:]
    /// The mark is saved a moment after it moved: an outage's records are
    /// acknowledged together, and the mark is a flash write.
    private var markTimer: EventLoop.TimerID?
    private var markFailing = false
    static let markDelayMilliseconds = 1_000
    /// The journal's records of this month and the last (the summary's figures), and
    /// the timer that publishes the summary again after local midnight.
    private var summaryRecords: [JournalRecord] = []
    private var summaryLimit = 5_000
    private let localTime = LocalTime.system
    private var midnightTimer: EventLoop.TimerID?
    /// The summary follows new records a moment later: an outage closes several
    /// records in a row, and one summary tells of all of them.
    private var summaryTimer: EventLoop.TimerID?
    static let summaryDelayMilliseconds = 2_000

    /// Most time the goodbye at stop may take (the agent's stop waits for it).
    package static let stopTimeoutMilliseconds = 2_000

    /// Reads the credentials (checked: mode 0600, owner), finds the node id, sets up
    /// the client and its first connect. Errors are the configuration's: the agent
    /// should refuse to start.
    package static func attach(to agent: Agent, settings: MQTTSettings,
                              machineIDPath: String = "/etc/machine-id") throws(MQTTError) -> MQTTBridge? {
        guard let broker = settings.broker else { return nil }
        let nodeID: String
        if let configured = settings.nodeID {
            nodeID = configured
        } else if let text = SmallFile.read(machineIDPath, limit: 128), let id = TopicName.nodeID(machineID: text) {
            nodeID = id
        } else {
            throw MQTTError(setup: "[mqtt] node-id is not set and \(machineIDPath) holds no machine id; set node-id")
        }
        let credentials = try settings.credentialsFilePath.map { path throws(MQTTError) in try readCredentials(path) }
        let bridge = try MQTTBridge(loop: agent.loop, broker: broker, settings: settings, nodeID: nodeID,
                                    credentials: credentials, random: { Int.random(in: 0..<max(1, $0)) },
                                    interfaceOfAddress: MQTTBridge.interfaceName(holding:))
        bridge.relay = try relay(for: agent)
        if let relay = bridge.relay {
            try bridge.connection.useRelay(port: relay.port)
            agent.sampler.countOwnTraffic { [weak relay] uplink in relay?.ownSegments(on: uplink) ?? (0, 0) }
        }
        let journal = agent.configuration.agent.journal
        if let journalPath = agent.journalPath, let deliveredPath = journal.deliveredPath {
            bridge.startDelivery(journalPath: journalPath, deliveredPath: deliveredPath, limit: journal.maximumRecords)
        }
        agent.observeJournal { [weak bridge] records in bridge?.recorded(records) }
        agent.observe { [weak bridge] state, events in bridge?.changed(state, events: events) }
        agent.onStop { [weak bridge] final, event, done in
            guard let bridge else { return done() }
            bridge.stop(final, event: event, done: done)
        }
        bridge.connect()
        return bridge
    }

    /// The relay that makes the connection for libmosquitto, routed by the agent's
    /// view now: the primary and the uplinks from its state, every link from its link
    /// source, an uplink's DNS servers as its probes find them.
    private static func relay(for agent: Agent) throws(MQTTError) -> OwnTrafficRelay {
        let wiring = OwnTrafficRelay.Wiring(
            route: { [unowned agent] address in
                OwnTrafficRoute.of(address, links: Array((agent.links?.links ?? [:]).values), primary: agent.core.primary)
            },
            primary: { [unowned agent] in agent.core.primary },
            servers: { [unowned agent] uplink in
                let settings = agent.configuration.dns
                guard let uplink else {
                    let text = SmallFile.read(settings.resolvConfPath, limit: 64 * 1_024) ?? ""
                    return DNSServers(source: .resolvConf, addresses: DNSFileParsers.resolvConf(text))
                }
                return agent.adapters.files.dnsServers(for: uplink, index: UplinkNameLookup.index(of: uplink),
                                                       configured: agent.configuration.interfaces[uplink]?.dnsServers,
                                                       settings: settings)
            },
            lookupTimeoutMilliseconds: agent.configuration.dns.timeoutMilliseconds)
        do {
            return try OwnTrafficRelay(loop: agent.loop, resolver: agent.adapters.resolver, wiring: wiring)
        } catch {
            throw MQTTError(setup: "the agent's MQTT relay: \(error)")
        }
    }

    init(loop: EventLoop, broker: MQTTBroker, settings: MQTTSettings, nodeID: String, credentials: MQTTCredentials?,
         random: @escaping RandomSource, interfaceOfAddress: @escaping (IPAddress) -> String?) throws(MQTTError) {
        self.loop = loop
        self.broker = broker
        self.random = random
        self.interfaceOfAddress = interfaceOfAddress
        session = MQTTSession(settings: settings, nodeID: nodeID)
        var events = MQTTConnection.Events(connected: { _ in }, disconnected: { _, _ in }, message: { _, _ in })
        // The connection calls back into this object; set after init (no cycle: the
        // closures hold it weakly).
        connection = try MQTTConnection(loop: loop, clientID: "uplinkd-\(nodeID)", protocolVersion: 5, events: events)
        try connection.configure(tls: broker.tls ? (settings.caFilePath, settings.certificateFilePath, settings.keyFilePath) : nil,
                                 credentials: credentials, will: session.will)
        events = MQTTConnection.Events(
            connected: { [weak self] code in self?.connackReceived(code) },
            disconnected: { [weak self] error, detail in self?.connectionEnded(error, detail: detail) },
            message: { [weak self] topic, payload in self?.received(topic, payload) },
            packet: { [weak self] in self?.relay?.packetDelivered() },
            acknowledged: { [weak self] id, reason in self?.acknowledged(id, reason: reason) })
        connection.setEvents(events)
        Log.notice("mqtt: publishing to \(broker) as \(session.topics.base)\(settings.homeAssistant ? ", Home Assistant discovery under \(settings.discoveryPrefix)" : "")")
    }

    // MARK: connection

    private func connect() {
        reconnectTimer = nil
        guard !stopping else { return }
        acknowledged = false
        attemptKeepAliveSeconds = session.keepAliveSeconds
        do {
            try connection.connect(host: broker.host, port: broker.port, keepAliveSeconds: attemptKeepAliveSeconds,
                                   protocolVersion: session.protocolVersion)
            // Only this socket may use the relay (its far end is the relay's listener).
            if let relay, let port = connection.socketLocalPort { relay.expect(localPort: port) }
            Log.debug("mqtt: connecting to \(broker) (MQTT \(versionName), keep-alive \(session.keepAliveSeconds) s)")
        } catch {
            failed("cannot connect to \(broker): \(error)" + (connection.lastError.map { " (\($0))" } ?? ""))
        }
    }

    private var versionName: String { session.protocolVersion == 5 ? "5" : "3.1.1" }

    private func connackReceived(_ code: Int) {
        guard code == 0 else {
            // The library closes the connection after a refusal; the disconnect
            // callback follows and schedules the retry.
            let refusedProtocol = MQTTSession.refusesProtocol(connackCode: code) && session.protocolVersion == 5
            if refusedProtocol {
                Log.notice("mqtt: \(broker) does not speak MQTT 5; falling back to 3.1.1")
                session.disconnected(refusedProtocol: true)
            } else {
                pendingRefusal = "the broker \(broker) refused the connection: \(MQTTBridge.connackSentence(code)) (CONNACK code \(code))"
            }
            return
        }
        acknowledged = true
        backoff.reset()
        if unreachable.isPresent {
            Log.cleared(&unreachable, now: loop.nowMilliseconds, "mqtt: connected to \(broker) again (MQTT \(versionName))")
        } else {
            Log.notice("mqtt: connected to \(broker) (MQTT \(versionName))")
        }
        let through = relay != nil ? relay?.outboundInterface
            : connection.localAddress.flatMap(interfaceOfAddress).flatMap(InterfaceName.init)
        send(session.connected(through: through, awaitingPrimary: relay?.outboundAwaitsPrimary ?? false,
                               keepAliveSeconds: attemptKeepAliveSeconds, now: loop.nowMilliseconds))
        delivery?.connected()
        sendJournal()
        sendSummary()
        for topic in session.subscriptions {
            do { try connection.subscribe(topic) } catch { Log.warning("mqtt: \(error)") }
        }
        scheduleHeartbeat()
        // Made before there was a primary, or the primary moved while it was made.
        if session.wantsNewConnection { reconnect() }
    }

    /// A connection is being given up on purpose; connect again when it has ended.
    private var reconnectRequested = false
    /// The keep-alive of the current attempt's CONNECT.
    private var attemptKeepAliveSeconds = 60

    /// A refusal seen in the CONNACK, reported when the connection ends.
    private var pendingRefusal: String?

    private func connectionEnded(_ error: MQTTError?, detail: String?) {
        let wasUp = acknowledged
        acknowledged = false
        if session.connected { session.disconnected() }
        if let heartbeatTimer { loop.cancel(heartbeatTimer) }
        heartbeatTimer = nil
        if reconnectRequested {
            reconnectRequested = false
            scheduleReconnect(afterMilliseconds: 0)
            return
        }
        if stopping {
            // Not from inside libmosquitto's callback: the handle is freed there.
            loop.schedule(afterMilliseconds: 0) { [weak self] in self?.finishStop() }
            return
        }
        var why: String
        if let refusal = pendingRefusal {
            // The refusal says it all; the library's error after it is its echo.
            why = refusal
        } else {
            why = wasUp ? "lost the connection to \(broker)" : "cannot connect to \(broker)"
            if let error { why += ": \(error)" }
            if let detail, !wasUp { why += " (\(detail))" }
        }
        pendingRefusal = nil
        if session.protocolVersion == 4 && !wasUp && !unreachable.isPresent && error == nil {
            // The fallback after a protocol refusal: again at once.
            scheduleReconnect(afterMilliseconds: 0)
            return
        }
        failed(why)
    }

    /// Logs a failure (when failures start, then hourly: `RecurringCondition`) and
    /// schedules the next attempt.
    private func failed(_ why: String) {
        let delay = backoff.nextDelayMilliseconds(random: random)
        Log.occurred(&unreachable, now: loop.nowMilliseconds,
                     "mqtt: \(why); trying again in \(Double(delay) / 1_000) s (\(session.queuedEvents) events waiting)")
        scheduleReconnect(afterMilliseconds: delay)
    }

    private func scheduleReconnect(afterMilliseconds delay: Int) {
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        reconnectTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in self?.connect() }
    }

    private func received(_ topic: String, _ payload: String) {
        session.received(topic: topic, payload: payload, now: loop.nowMilliseconds,
                         jitterMilliseconds: random(MQTTSession.rediscoveryJitterMilliseconds))
        guard rediscoveryTimer == nil, let due = session.nextRediscoveryMilliseconds else { return }
        rediscoveryTimer = loop.schedule(afterMilliseconds: max(0, due - loop.nowMilliseconds)) { [weak self] in
            guard let self else { return }
            self.rediscoveryTimer = nil
            self.send(self.session.rediscovery(now: self.loop.nowMilliseconds))
        }
    }

    // MARK: the agent's side

    private func changed(_ state: AgentState, events: [HookEvent]) {
        guard !stopping else { return }
        if !acknowledged, let relay, let through = relay.connectingThrough, let primary = state.primary, through != primary {
            // Still being made through the uplink the primary just left: waiting for its
            // time limit would hold the failover's event back by seconds.
            reconnectRequested = true
            backoff.reset()
            relay.abandonConnecting()
        }
        let output = session.changed(state, events: events, now: loop.nowMilliseconds)
        if output.reconnect { return reconnect() }
        send(output.messages)
        scheduleHeartbeat()
    }

    /// Gives up the connection on purpose and makes a new one (through the primary).
    private func reconnect() {
        Log.info("mqtt: connecting again (the primary moved off the connection's uplink, or its metering changed the keep-alive to \(session.keepAliveSeconds) s)")
        session.disconnected()
        if let heartbeatTimer { loop.cancel(heartbeatTimer) }
        heartbeatTimer = nil
        backoff.reset()
        // A clean DISCONNECT first, so the broker does not send the will (a flicker
        // of `offline`) for a connection given up on purpose; the next connect follows
        // its callback, or this timer if none comes.
        reconnectRequested = true
        connection.disconnectWhenSent()
        if reconnectRequested { scheduleReconnect(afterMilliseconds: 1_000) }
    }

    private func scheduleHeartbeat() {
        if let heartbeatTimer { loop.cancel(heartbeatTimer) }
        heartbeatTimer = nil
        guard let due = session.nextHeartbeatMilliseconds else { return }
        heartbeatTimer = loop.schedule(afterMilliseconds: max(0, due - loop.nowMilliseconds)) { [weak self] in
            guard let self else { return }
            self.heartbeatTimer = nil
            self.send(self.session.heartbeat(now: self.loop.nowMilliseconds))
            self.scheduleHeartbeat()
        }
    }

    private func send(_ messages: [MQTTMessage]) {
        for message in messages {
            do {
                try connection.publish(message)
                Log.debug("mqtt: sent \(message)")
            } catch {
                Log.warning("mqtt: \(error)")
            }
        }
    }

    /// The agent stops: the final state, the stop event and `offline` are written,
    /// then the connection is closed; `done` runs when the broker has them or after
    /// `stopTimeoutMilliseconds`, whichever comes first.
    private func stop(_ final: AgentState, event: HookEvent?, done: @escaping () -> Void) {
        stopping = true
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        reconnectTimer = nil
        if let heartbeatTimer { loop.cancel(heartbeatTimer) }
        heartbeatTimer = nil
        if let rediscoveryTimer { loop.cancel(rediscoveryTimer) }
        rediscoveryTimer = nil
        if let midnightTimer { loop.cancel(midnightTimer) }
        midnightTimer = nil
        if let summaryTimer { loop.cancel(summaryTimer) }
        summaryTimer = nil
        let messages = session.stopping(final, event: event, now: loop.nowMilliseconds)
        guard session.connected, !messages.isEmpty else {
            saveMark()
            connection.close()
            return done()
        }
        stopDone = done
        send(messages)
        connection.disconnectWhenSent()
        loop.schedule(afterMilliseconds: MQTTBridge.stopTimeoutMilliseconds) { [weak self] in
            guard let self, self.stopDone != nil else { return }
            Log.warning("mqtt: the broker did not take the goodbye within \(MQTTBridge.stopTimeoutMilliseconds) ms; closing")
            self.finishStop()
        }
    }

    private func finishStop() {
        saveMark()
        connection.close()
        relay?.finish()
        let done = stopDone
        stopDone = nil
        done?()
    }

    // MARK: the journal

    /// The records the journal holds above the delivered mark wait from the start;
    /// the mark is `JOURNAL.delivered`. Only a journal on disk is delivered: its
    /// numbers go on across restarts, so a subscriber can tell a repeat by them.
    private func startDelivery(journalPath: String, deliveredPath markPath: String, limit: Int) {
        session.announcesAvailability = true
        summaryLimit = limit
        deliveredPath = markPath
        let mark = SmallFile.read(markPath, limit: 256).flatMap(JournalDelivery.mark(fromText:)) ?? 0
        let records = JournalReader.records(journalPath)
        keepForSummary(records)
        let fresh = JournalDelivery(journal: records, deliveredThrough: mark, limit: limit)
        delivery = fresh
        if fresh.waitingCount > 0 {
            Log.info("mqtt: \(fresh.waitingCount) journal records wait for the broker (delivered through \(fresh.deliveredThrough))")
        }
    }

    private func recorded(_ records: [JournalRecord]) {
        guard delivery != nil else { return }
        delivery?.add(records)
        keepForSummary(records)
        guard !stopping else { return }
        sendJournal()
        guard summaryTimer == nil else { return }
        summaryTimer = loop.schedule(afterMilliseconds: MQTTBridge.summaryDelayMilliseconds) { [weak self] in
            self?.summaryTimer = nil
            self?.sendSummary()
        }
    }

    /// Publishes the availability summary when it changed (connected, with a journal).
    private func sendSummary() {
        guard session.connected, delivery != nil else { return }
        let now = Int(loop.time.wallSeconds)
        let starts = AvailabilitySummary.periodStarts(at: now, local: localTime)
        let payload = AvailabilitySummary.payload(JournalHistory(records: summaryRecords), nowWallSeconds: now,
                                                  dayStartWallSeconds: starts.day, monthStartWallSeconds: starts.month)
        if let message = session.summary(payload) { send([message]) }
        if midnightTimer == nil {
            let delay = max(1, starts.nextDay - now + 1) * 1_000
            midnightTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in
                self?.midnightTimer = nil
                self?.sendSummary()
            }
        }
    }

    /// Records that may count this month (ended within the last 32 days).
    private func keepForSummary(_ records: [JournalRecord]) {
        let oldest = Int(loop.time.wallSeconds) - 32 * 86_400
        summaryRecords = (summaryRecords + records).filter { $0.end.wallSeconds >= oldest || !$0.end.synced }
        // A clock never synchronised keeps its records' times unsure: at most the
        // journal's bound of them.
        if summaryRecords.count > summaryLimit { summaryRecords.removeFirst(summaryRecords.count - summaryLimit) }
    }

    /// Hands the waiting records to the client, oldest first, while connected.
    private func sendJournal() {
        guard session.connected, var pending = delivery else { return }
        for record in pending.take() {
            guard let sequence = record.sequence else { continue }
            do {
                let id = try connection.publish(JournalDelivery.message(record, topics: session.topics))
                journalMessages[id] = sequence
            } catch {
                pending.release(sequence)
                Log.warning("mqtt: journal record \(sequence): \(error); sent after the next connect")
            }
        }
        delivery = pending
    }

    private func acknowledged(_ id: Int, reason: Int) {
        guard let sequence = journalMessages.removeValue(forKey: id) else { return }
        guard reason < 0x80 else {
            Log.warning("mqtt: the broker refused journal record \(sequence) (reason code \(reason)); sent again after the next connect")
            delivery?.release(sequence)
            return
        }
        guard delivery?.acknowledged(sequence) == true, markTimer == nil else { return }
        markTimer = loop.schedule(afterMilliseconds: MQTTBridge.markDelayMilliseconds) { [weak self] in
            self?.markTimer = nil
            self?.saveMark()
        }
    }

    private func saveMark() {
        if let markTimer { loop.cancel(markTimer) }
        markTimer = nil
        guard let deliveredPath, let delivery else { return }
        if SmallFile.read(deliveredPath, limit: 256).flatMap(JournalDelivery.mark(fromText:)) == delivery.deliveredThrough {
            return
        }
        do {
            try AtomicFile.replace(deliveredPath, with: JournalDelivery.markText(delivery.deliveredThrough))
            markFailing = false
        } catch {
            if !markFailing { Log.warning("mqtt: saving the journal's delivered mark \(deliveredPath): \(error); records may be sent again after a restart") }
            markFailing = true
        }
    }

    // MARK: helpers

    static func connackSentence(_ code: Int) -> String {
        switch code {
        case 4, 0x86: return "bad user name or password"
        case 5, 0x87: return "not authorised (wrong user name or password, or not allowed)"
        case 2, 0x85: return "client identifier not valid"
        case 3, 0x88, 0x89: return "server unavailable or busy"
        case 0x8A: return "banned"
        case 0x8C: return "bad authentication method"
        case 0x97: return "quota exceeded"
        default: return "refused"
        }
    }

    /// Reads `username`/`password` from a file that only the agent's user can read:
    /// a file others can read or write, or owned by someone else, is refused.
    static func readCredentials(_ path: String) throws(MQTTError) -> MQTTCredentials {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw MQTTError(setup: "[mqtt] credentials-file \(path): cannot open: \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw MQTTError(setup: "[mqtt] credentials-file \(path): cannot stat: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw MQTTError(setup: "[mqtt] credentials-file \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw MQTTError(setup: "[mqtt] credentials-file \(path) is owned by uid \(info.st_uid), not by the agent's user (uid \(geteuid())); refused")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw MQTTError(setup: "[mqtt] credentials-file \(path) has mode \(String(info.st_mode & 0o777, radix: 8)); it must be 0600 (others may not read a password); refused")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while bytes.count <= 4_096 {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        guard bytes.count <= 4_096 else { throw MQTTError(setup: "[mqtt] credentials-file \(path) is larger than 4 KiB") }
        do {
            return try MQTTCredentials.parse(String(decoding: bytes, as: UTF8.self), fileName: path)
        } catch {
            throw MQTTError(setup: "\(error)")
        }
    }

    /// The interface that holds `address`, from getifaddrs.
    static func interfaceName(holding address: IPAddress) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let socketAddress = current.pointee.ifa_addr, let name = current.pointee.ifa_name else { continue }
            let candidate: IPAddress?
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                candidate = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin_addr
                    return IPAddress(family: .ipv4, bytes: withUnsafeBytes(of: &raw) { Array($0) })
                }
            case AF_INET6:
                candidate = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin6_addr
                    return IPAddress(family: .ipv6, bytes: withUnsafeBytes(of: &raw) { Array($0) })
                }
            default:
                candidate = nil
            }
            if candidate == address { return String(cString: name) }
        }
        return nil
    }
}
