import CMosquitto
import CMosquittoShim
import Glibc
import UplinkCore

/// One libmosquitto client driven by the agent's `EventLoop`: its socket is watched
/// by epoll (readable always, writable while libmosquitto has bytes to send or a
/// connect under way), a zero-timeout `mosquitto_loop` runs on readiness and
/// `mosquitto_loop_misc` (keep-alive) on a timer. No library thread is started.
///
/// Ownership: the handle's user data is an unretained pointer to this object; the
/// trampolines recover `self` from it. The handle is destroyed in `close()` (and
/// `deinit`), before this object goes, so no callback can see a freed object.
/// Callbacks run only inside the loop_* calls made here, on the loop's thread.
final class MQTTConnection {
    /// What the connection tells its owner.
    struct Events {
        /// The broker answered the CONNECT: 0 accepted, else the CONNACK code.
        var connected: (_ connackCode: Int) -> Void
        /// The connection ended (or never came up): why, and libmosquitto's last
        /// error line (OpenSSL's reason for a failed handshake), if any.
        var disconnected: (_ error: MQTTError?, _ detail: String?) -> Void
        var message: (_ topic: String, _ payload: String) -> Void
        /// A whole packet came from the broker (a CONNACK, PUBACK or PUBLISH).
        var packet: () -> Void = {}
        /// The broker answered a QoS 1 message (`publish`'s id) with its PUBACK:
        /// reason 0x80 and up refuses it (MQTT 5).
        var acknowledged: (_ messageID: Int, _ reason: Int) -> Void = { _, _ in }
    }

    private let loop: EventLoop
    private var handle: OpaquePointer?
    private var events: Events
    private var watched: Int32 = -1
    private var watchedWritable = false
    private var miscTimer: EventLoop.TimerID?
    private var keepAliveSeconds = 60
    /// The last error-level line of libmosquitto's log during this attempt.
    private var lastErrorLine: String?
    /// The owner was told that the current attempt's connection ended.
    private var disconnectReported = false
    /// Most bytes of an incoming message that are looked at (Home Assistant's
    /// birth message is one word).
    static let incomingLimitBytes = 256

    init(loop: EventLoop, clientID: String, protocolVersion: Int, events: Events) throws(MQTTError) {
        self.loop = loop
        self.events = events
        mosquitto_lib_init()
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard let handle = uplinkd_mqtt_new(clientID, Int32(protocolVersion), user,
                                            MQTTConnection.onConnect, MQTTConnection.onDisconnect,
                                            MQTTConnection.onPublish, MQTTConnection.onMessage,
                                            MQTTConnection.onLog) else {
            throw MQTTError(MosquittoCode.noMemory.rawValue32, "creating the MQTT client")
        }
        self.handle = handle
    }

    deinit { close() }

    /// Closes the socket without a DISCONNECT and frees the handle.
    func close() {
        stopWatching()
        if let handle { uplinkd_mqtt_destroy(handle) }
        handle = nil
    }

    func configure(tls: (ca: String?, certificate: String?, key: String?)?, credentials: MQTTCredentials?,
                   will: MQTTMessage) throws(MQTTError) {
        guard let handle else { return }
        if let tls {
            let rc = uplinkd_mqtt_tls(handle, tls.ca, tls.certificate, tls.key)
            guard rc == 0 else { throw MQTTError(rc, "setting up TLS (ca-file, certificate-file, key-file readable?)") }
        }
        if let credentials {
            let rc = uplinkd_mqtt_credentials(handle, credentials.username, credentials.password)
            guard rc == 0 else { throw MQTTError(rc, "setting the user name and password") }
        }
        let rc = will.payload.withCString { uplinkd_mqtt_will(handle, will.topic, $0, Int32(will.payload.utf8.count)) }
        guard rc == 0 else { throw MQTTError(rc, "setting the last will") }
    }

    /// Starts a non-blocking connect (an address literal needs no lookup; a host name
    /// is looked up by libmosquitto). An earlier connection is closed first; QoS 1
    /// messages it had not seen acknowledged are sent again on the new one.
    func connect(host: String, port: Int, keepAliveSeconds: Int, protocolVersion: Int) throws(MQTTError) {
        guard let handle else { return }
        stopWatching()
        lastErrorLine = nil
        disconnectReported = false
        self.keepAliveSeconds = keepAliveSeconds
        uplinkd_mqtt_set_protocol(handle, Int32(protocolVersion))
        let rc = uplinkd_mqtt_connect(handle, host, Int32(port), Int32(keepAliveSeconds))
        guard rc == 0 || rc == MosquittoCode.connectionPending.rawValue32 else {
            throw MQTTError(rc, "connecting to \(host) port \(port)")
        }
        syncWatch()
        scheduleMisc()
    }

    func setEvents(_ events: Events) { self.events = events }

    /// libmosquitto's last error line of this attempt (OpenSSL's reason), if any.
    var lastError: String? { lastErrorLine }

    /// Sends DISCONNECT after what is queued (libmosquitto writes its packets in
    /// order); the disconnect callback follows once it is written.
    func disconnectWhenSent() {
        guard let handle else { return }
        let rc = mosquitto_disconnect(handle)
        if rc != 0 { Log.debug("mqtt: disconnect returned \(rc)") }
        afterLoopCall(rc)
    }

    /// Queues one message and tries to write it at once; returns its message id
    /// (what `Events.acknowledged` names). libmosquitto keeps a QoS 1 message until
    /// its PUBACK, across reconnects of this handle.
    @discardableResult
    func publish(_ message: MQTTMessage) throws(MQTTError) -> Int {
        guard let handle else { throw MQTTError(MosquittoCode.noConnection.rawValue32, "publishing \(message.topic)") }
        let length = Int32(message.payload.utf8.count)
        var messageID: Int32 = 0
        let rc = message.payload.withCString { payload in
            uplinkd_mqtt_publish(handle, &messageID, message.topic, payload, length, Int32(message.qos), message.retain)
        }
        guard rc == 0 else { throw MQTTError(rc, "publishing \(message.topic)") }
        syncWatch()
        return Int(messageID)
    }

    func subscribe(_ topic: String) throws(MQTTError) {
        guard let handle else { return }
        let rc = uplinkd_mqtt_subscribe(handle, topic, 1)
        guard rc == 0 else { throw MQTTError(rc, "subscribing to \(topic)") }
        syncWatch()
    }

    /// Sends every later connection through the SOCKS5 proxy at 127.0.0.1:`port` (the
    /// agent's `OwnTrafficRelay`); the broker's name goes to the proxy unresolved.
    func useRelay(port: Int) throws(MQTTError) {
        guard let handle else { return }
        let rc = mosquitto_socks5_set(handle, "127.0.0.1", Int32(port), nil, nil)
        guard rc == 0 else { throw MQTTError(rc, "sending the connection through the agent's relay") }
    }

    /// The local port of the socket libmosquitto connects with, once it has one.
    var socketLocalPort: Int? {
        guard let handle else { return nil }
        let descriptor = mosquitto_socket(handle)
        return descriptor >= 0 ? SocketAddress.port(of: descriptor, peer: false) : nil
    }

    /// The local address of the connection's socket, once it has one.
    var localAddress: IPAddress? {
        guard let handle else { return nil }
        let descriptor = mosquitto_socket(handle)
        guard descriptor >= 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard rc == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: &storage) { raw -> IPAddress? in
            switch family {
            case AF_INET:
                let address = raw.load(as: sockaddr_in.self).sin_addr
                return IPAddress(family: .ipv4, bytes: withUnsafeBytes(of: address) { Array($0) })
            case AF_INET6:
                let address = raw.load(as: sockaddr_in6.self).sin6_addr
                return IPAddress(family: .ipv6, bytes: withUnsafeBytes(of: address) { Array($0) })
            default:
                return nil
            }
        }
    }

    // MARK: the loop

    /// Watches libmosquitto's socket as it now is: a new socket after a connect,
    /// none after a close, writable interest while there is something to write.
    private func syncWatch() {
        guard let handle else { return stopWatching() }
        let descriptor = mosquitto_socket(handle)
        if descriptor != watched { stopWatching() }
        guard descriptor >= 0 else { return }
        let wantWrite = mosquitto_want_write(handle) || watched != descriptor
        guard watched != descriptor || wantWrite != watchedWritable else { return }
        do {
            try loop.watch(descriptor, for: wantWrite ? [.readable, .writable] : .readable) { [unowned self] readiness in
                self.ready(readiness)
            }
            watched = descriptor
            watchedWritable = wantWrite
        } catch {
            Log.error("mqtt: cannot watch the broker connection: \(error)")
        }
    }

    private func stopWatching() {
        if watched >= 0 { loop.unwatch(watched) }
        watched = -1
        watchedWritable = false
        if let miscTimer { loop.cancel(miscTimer) }
        miscTimer = nil
    }

    /// The socket is ready. libmosquitto 2.0 continues a TLS handshake only inside
    /// `mosquitto_loop` (not `mosquitto_loop_read`/`_write`), so that is what runs
    /// here, with a timeout of 0: a poll of the one socket epoll just reported, which
    /// then reads, writes and checks the keep-alive as needed, without blocking.
    private func ready(_ readiness: EventLoop.Readiness) {
        guard let handle else { return }
        afterLoopCall(mosquitto_loop(handle, 0, 1))
    }

    /// After a loop_* call: a failure closed the socket (and told the owner through
    /// the disconnect callback, except for failures before the socket was handed to
    /// libmosquitto's own handling); otherwise the interest follows want_write.
    private func afterLoopCall(_ rc: Int32) {
        guard let handle else { return }
        if mosquitto_socket(handle) < 0 {
            let wasWatching = watched >= 0
            stopWatching()
            // libmosquitto 2.0 closes the socket of a failed TLS handshake without
            // its disconnect callback: the owner hears of it here instead.
            if wasWatching && !disconnectReported {
                disconnectReported = true
                let code = rc != 0 ? rc : MosquittoCode.connectionLost.rawValue32
                events.disconnected(MQTTError(code, "connection to the broker"), lastErrorLine)
            }
            return
        }
        if rc != 0 && rc != MosquittoCode.connectionPending.rawValue32 {
            Log.debug("mqtt: loop call returned \(rc)")
        }
        syncWatch()
    }

    /// Keep-alive: libmosquitto sends PINGREQ (or gives up on a silent broker) from
    /// loop_misc, so it runs four times per keep-alive period: a ping goes out at
    /// most 1.25 periods after the last message, inside the broker's 1.5.
    private func scheduleMisc() {
        if let miscTimer { loop.cancel(miscTimer) }
        let interval = max(1_000, keepAliveSeconds * 1_000 / 4)
        miscTimer = loop.schedule(afterMilliseconds: interval) { [weak self] in
            guard let self, let handle = self.handle else { return }
            self.miscTimer = nil
            guard mosquitto_socket(handle) >= 0 else { return }
            let rc = mosquitto_loop_misc(handle)
            self.afterLoopCall(rc)
            if self.watched >= 0 { self.scheduleMisc() }
        }
    }

    // MARK: trampolines (non-capturing; `user` is this object, unretained)

    private static func connection(_ user: UnsafeMutableRawPointer?) -> MQTTConnection? {
        user.map { Unmanaged<MQTTConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let onConnect: uplinkd_mqtt_connect_callback = { user, reason in
        connection(user)?.events.packet()
        connection(user)?.events.connected(Int(reason))
    }

    private static let onDisconnect: uplinkd_mqtt_disconnect_callback = { user, rc in
        guard let connection = connection(user) else { return }
        connection.disconnectReported = true
        let error = rc == 0 ? nil : MQTTError(rc, "connection to the broker")
        connection.events.disconnected(error, connection.lastErrorLine)
    }

    private static let onPublish: uplinkd_mqtt_publish_callback = { user, messageID, reason in
        connection(user)?.events.packet()
        connection(user)?.events.acknowledged(Int(messageID), Int(reason))
    }

    private static let onMessage: uplinkd_mqtt_message_callback = { user, topic, payload, length in
        connection(user)?.events.packet()
        guard let connection = connection(user), let topic, length >= 0, length <= incomingLimitBytes else { return }
        let bytes = payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
        connection.events.message(String(cString: topic), String(decoding: bytes, as: UTF8.self))
    }

    private static let onLog: uplinkd_mqtt_log_callback = { user, level, line in
        guard let connection = connection(user), let line, level & Int32(MOSQ_LOG_ERR) != 0 else { return }
        // Bounded and made printable: it goes into a log line.
        connection.lastErrorLine = String(String(cString: line).printableEscaped.prefix(300))
    }
}

extension MosquittoCode {
    var rawValue32: Int32 { Int32(rawValue) }
}
