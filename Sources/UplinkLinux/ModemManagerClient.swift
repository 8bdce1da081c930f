import CSystemd
import CSystemdShim
import Glibc
import UplinkCore

/// ModemManager on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured), followed with
/// sd-bus on the agent's event loop: the bus's descriptor is watched by the loop and
/// its deadline is one of the loop's timers, so there is no GLib main loop and no
/// thread. It follows ModemManager's name (attaching whenever it starts or restarts),
/// its ObjectManager (modems, SIMs and bearers appearing and vanishing) and every
/// property change under its root, sets up signal figures on each modem, and carries
/// out recovery steps (reconnect the bearer, reset the modem and connect it again).
///
/// Ownership: the client owns the bus connection and its match slots and releases them
/// when it goes (`close`). sd-bus callbacks are non-capturing trampolines: match
/// callbacks get the client unretained (their slots never outlive it); each method call
/// gets a `PendingCall` retained once, released by its slot's destroy callback whether
/// or not a reply ever came.
public final class ModemManagerClient: ModemSource {
    public var onChange: (([ModemFacts]) -> Void)?
    private let loop: EventLoop
    private var bus: OpaquePointer?
    private var slots: [OpaquePointer] = []
    private var busTimer: EventLoop.TimerID?
    private var reconnectTimer: EventLoop.TimerID?
    /// The connection properties of bearers disconnected for a cold standby, by modem.
    private var standbyProperties: [String: DBusValue] = [:]
    private var reconnectDelayMilliseconds = ModemManagerClient.firstReconnectMilliseconds
    private var objects = ModemManagerObjects()
    /// ModemManager owns its name on the bus now.
    private var present = false
    private var signalIntervalMilliseconds = 30_000
    /// Modems whose signal figures were set up, by object path.
    private var signalSetUp: Set<String> = []
    /// Bearers whose properties were asked for: ModemManager's ObjectManager lists
    /// modems only, so a bearer is read with GetAll when a modem first lists it.
    private var bearersAsked: Set<String> = []
    /// Bearer reads not answered yet: the modems are told only once they are all in, or
    /// a modem would look disconnected for a moment.
    private var bearerReadsInFlight = 0
    /// Bearer properties to connect with once a reset modem is back, by equipment id.
    private var connectAfterReset: [String: (properties: DBusValue, deadlineMilliseconds: Int)] = [:]
    /// The last modems told to `onChange`, so unchanged ones are not told again.
    private var lastReported: [ModemFacts]?

    static let firstReconnectMilliseconds = 1_000
    static let maximumReconnectMilliseconds = 60_000
    static let callTimeoutMicroseconds: UInt64 = 25_000_000
    /// A reset modem that is not back within this long is given up on.
    static let resetReturnMilliseconds = 300_000
    /// The keys of a bearer's properties that `Simple.Connect` takes.
    static let connectKeys: Set<String> = ["apn", "ip-type", "allowed-auth", "user", "password", "allow-roaming",
                                           "number", "rm-protocol"]

    public init(loop: EventLoop) {
        self.loop = loop
    }

    deinit {
        stop()
    }

    /// Leaves the bus for good (a one-shot look is over, or the agent stops).
    public func stop() {
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        reconnectTimer = nil
        close()
        onChange = nil
    }

    public func start(signalIntervalMilliseconds: Int) {
        self.signalIntervalMilliseconds = signalIntervalMilliseconds
        connect()
    }

    // MARK: the bus on the loop

    private func connect() {
        var opened: OpaquePointer?
        let code = sd_bus_open_system(&opened)
        guard code >= 0, let opened else {
            Log.notice("modems: no system bus (\(SystemError("sd_bus_open_system", errno: -code))); trying again later")
            changed()
            scheduleReconnect()
            return
        }
        bus = opened
        _ = sd_bus_set_description(opened, "uplinkd")
        let fd = sd_bus_get_fd(opened)
        guard fd >= 0, addMatches() else {
            Log.warning("modems: cannot follow ModemManager on the system bus; trying again later")
            close()
            scheduleReconnect()
            return
        }
        askWhetherPresent()
        rearm()
    }

    private func addMatches() -> Bool {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let rules: [(sender: String?, path: String?, interface: String, member: String?, handler: sd_bus_message_handler_t)] = [
            ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
             { message, userdata, _ in ModemManagerClient.from(userdata).nameOwnerChanged(message) }),
            (nil, ModemManagerObjects.root, "org.freedesktop.DBus.ObjectManager", nil,
             { message, userdata, _ in ModemManagerClient.from(userdata).objectManagerSignal(message) }),
        ]
        for rule in rules {
            var slot: OpaquePointer?
            let code = sd_bus_match_signal(bus, &slot, rule.sender, rule.path, rule.interface, rule.member, rule.handler, me)
            guard code >= 0, let slot else { return false }
            slots.append(slot)
        }
        // Property changes anywhere under ModemManager's root (modems, bearers, SIMs).
        var slot: OpaquePointer?
        let rule = "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='\(ModemManagerObjects.root)'"
        let code = sd_bus_add_match(bus, &slot, rule, { message, userdata, _ in
            ModemManagerClient.from(userdata).propertiesChanged(message)
        }, me)
        guard code >= 0, let slot else { return false }
        slots.append(slot)
        return true
    }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> ModemManagerClient {
        Unmanaged<ModemManagerClient>.fromOpaque(userdata!).takeUnretainedValue()
    }

    /// Lets sd-bus do its work, then tells the loop what it waits for next.
    private func process() {
        guard let bus else { return }
        while true {
            let code = sd_bus_process(bus, nil)
            if code == 0 { break }
            if code < 0 {
                Log.warning("modems: the system bus connection failed (\(SystemError("sd_bus_process", errno: -code))); connecting again")
                lostBus()
                return
            }
        }
        rearm()
    }

    private func rearm() {
        guard let bus else { return }
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        // Possibly inside sd-bus's own processing: the connection goes on the next turn.
        let lose = { [weak self] in self?.loop.schedule(afterMilliseconds: 0) { self?.lostBus() }; return }
        guard fd >= 0, events >= 0 else { return lose() }
        var interest: EventLoop.Interest = []
        if Int16(events) & Int16(POLLIN) != 0 { interest.insert(.readable) }
        if Int16(events) & Int16(POLLOUT) != 0 { interest.insert(.writable) }
        do {
            try loop.watch(fd, for: interest.isEmpty ? .readable : interest) { [unowned self] _ in process() }
        } catch {
            Log.warning("modems: cannot watch the system bus: \(error)")
            return lose()
        }
        if let busTimer { loop.cancel(busTimer) }
        busTimer = nil
        let delay = uplinkd_bus_timeout_milliseconds(bus)
        if delay >= 0 {
            busTimer = loop.schedule(afterMilliseconds: Int(clamping: delay)) { [weak self] in
                self?.busTimer = nil
                self?.process()
            }
        }
    }

    private func lostBus() {
        close()
        if present || !objects.isEmpty {
            present = false
            forgetModems()
        }
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        guard reconnectTimer == nil else { return }
        let delay = reconnectDelayMilliseconds
        reconnectDelayMilliseconds = min(reconnectDelayMilliseconds * 2, ModemManagerClient.maximumReconnectMilliseconds)
        reconnectTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in
            self?.reconnectTimer = nil
            self?.connect()
        }
    }

    /// Drops the connection and everything tied to it.
    private func close() {
        if let busTimer { loop.cancel(busTimer) }
        busTimer = nil
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        guard let bus else { return }
        let fd = sd_bus_get_fd(bus)
        if fd >= 0 { loop.unwatch(fd) }
        sd_bus_flush_close_unref(bus)
        self.bus = nil
    }

    // MARK: calls

    /// One method call in flight and what to do with its reply.
    private final class PendingCall {
        let client: ModemManagerClient
        let what: String
        /// Gets the reply, nil when the call failed.
        let reply: (OpaquePointer?) -> Void

        init(client: ModemManagerClient, what: String, reply: @escaping (OpaquePointer?) -> Void) {
            self.client = client
            self.what = what
            self.reply = reply
        }
    }

    /// Calls a method of ModemManager without starting it (no bus activation: uplinkd
    /// follows ModemManager, it never launches it). `arguments` are appended in order;
    /// `reply` gets the reply, or nil when the call failed (logged).
    private func call(_ path: String, _ interface: String, _ member: String, arguments: [DBusValue] = [],
                      what: String, reply: @escaping (OpaquePointer?) -> Void = { _ in }) {
        guard let bus else { return }
        var message: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &message, ModemManagerObjects.service, path, interface, member) >= 0,
              let message else { return }
        defer { sd_bus_message_unref(message) }
        _ = sd_bus_message_set_auto_start(message, 0)
        guard arguments.allSatisfy({ BusMessage.append($0, to: message) }) else {
            Log.warning("modems: cannot write the arguments of \(what)")
            return reply(nil)
        }
        let pending = Unmanaged.passRetained(PendingCall(client: self, what: what, reply: reply))
        var slot: OpaquePointer?
        let code = sd_bus_call_async(bus, &slot, message, { message, userdata, _ in
            let pending = Unmanaged<PendingCall>.fromOpaque(userdata!).takeUnretainedValue()
            pending.client.replied(message!, to: pending)
            return 0
        }, pending.toOpaque(), ModemManagerClient.callTimeoutMicroseconds)
        guard code >= 0, let slot else {
            pending.release()
            Log.warning("modems: \(what): \(SystemError("sd_bus_call_async", errno: -code))")
            return reply(nil)
        }
        // The bus owns the slot until the reply (or its timeout); the slot's end
        // releases the call's context.
        _ = sd_bus_slot_set_destroy_callback(slot) { userdata in
            Unmanaged<PendingCall>.fromOpaque(userdata!).release()
        }
        _ = sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
        rearm()
    }

    private func replied(_ message: OpaquePointer, to pending: PendingCall) {
        if let error = sd_bus_message_get_error(message), let name = error.pointee.name {
            let text = error.pointee.message.map { String(cString: $0) } ?? ""
            let errorName = String(cString: name)
            if errorName.hasSuffix(".ServiceUnknown") || errorName.hasSuffix(".NameHasNoOwner") {
                Log.debug("modems: \(pending.what): ModemManager is not on the bus")
            } else {
                Log.warning("modems: \(pending.what) failed: \(errorName): \(text.printableEscaped)")
            }
            return pending.reply(nil)
        }
        pending.reply(message)
    }

    // MARK: following ModemManager

    private func askWhetherPresent() {
        guard let bus else { return }
        var message: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &message, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                             "org.freedesktop.DBus", "NameHasOwner") >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        guard BusMessage.append(.string(ModemManagerObjects.service), to: message) else { return }
        let pending = Unmanaged.passRetained(PendingCall(client: self, what: "NameHasOwner") { [unowned self] reply in
            guard let reply, BusMessage.read(reply)?.first?.bool == true else {
                Log.notice("modems: ModemManager is not on the system bus; cellular uplinks are judged by their probes until it is")
                changed()
                return
            }
            attached()
        })
        var slot: OpaquePointer?
        guard sd_bus_call_async(bus, &slot, message, { message, userdata, _ in
            let pending = Unmanaged<PendingCall>.fromOpaque(userdata!).takeUnretainedValue()
            pending.client.replied(message!, to: pending)
            return 0
        }, pending.toOpaque(), ModemManagerClient.callTimeoutMicroseconds) >= 0, let slot else {
            pending.release()
            return
        }
        _ = sd_bus_slot_set_destroy_callback(slot) { userdata in Unmanaged<PendingCall>.fromOpaque(userdata!).release() }
        _ = sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    /// ModemManager is on the bus: read every object it has.
    private func attached() {
        present = true
        reconnectDelayMilliseconds = ModemManagerClient.firstReconnectMilliseconds
        call(ModemManagerObjects.root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
             what: "GetManagedObjects") { [unowned self] reply in
            guard let reply else { return changed() }
            guard let managed = BusMessage.read(reply)?.first else {
                Log.warning("modems: ModemManager's object list could not be read (malformed or over the bounds)")
                return
            }
            objects.replaceAll(managed)
            signalSetUp = []
            bearersAsked = []
            Log.notice("modems: attached to ModemManager: \(objects.modems.map(\.equipmentID).joined(separator: ", ").nonEmpty ?? "no modem yet")")
            changed()
        }
    }

    private func nameOwnerChanged(_ message: OpaquePointer?) -> Int32 {
        guard let message, let arguments = BusMessage.read(message), arguments.count == 3,
              arguments[0].string == ModemManagerObjects.service else { return 0 }
        let newOwner = arguments[2].string ?? ""
        if newOwner.isEmpty {
            Log.notice("modems: ModemManager left the bus; cellular uplinks are judged by their probes until it is back")
            present = false
            forgetModems()
        } else {
            Log.notice("modems: ModemManager (re)started on the bus")
            attached()
        }
        return 0
    }

    private func objectManagerSignal(_ message: OpaquePointer?) -> Int32 {
        guard let message, present, let member = sd_bus_message_get_member(message).map({ String(cString: $0) }),
              let arguments = BusMessage.read(message), arguments.count == 2, let path = arguments[0].string else { return 0 }
        switch member {
        case "InterfacesAdded":
            objects.interfacesAdded(path: path, arguments[1])
        case "InterfacesRemoved":
            // A modem gone takes its bearers along (they are not ObjectManager's).
            let bearers = objects.bearerPaths(ofModemAt: path)
            objects.interfacesRemoved(path: path, (arguments[1].array ?? []).compactMap(\.string))
            if objects.property("State", of: ModemManagerObjects.modemInterface, at: path) == nil {
                for bearer in bearers { objects.interfacesRemoved(path: bearer, [ModemManagerObjects.bearerInterface]) }
                bearersAsked.subtract(bearers)
            }
            signalSetUp.remove(path)
        default:
            return 0
        }
        changed()
        return 0
    }

    private func propertiesChanged(_ message: OpaquePointer?) -> Int32 {
        guard let message, present, let path = sd_bus_message_get_path(message).map({ String(cString: $0) }),
              let arguments = BusMessage.read(message), arguments.count == 3, let interface = arguments[0].string else { return 0 }
        objects.propertiesChanged(path: path, interface: interface, changed: arguments[1],
                                  invalidated: (arguments[2].array ?? []).compactMap(\.string))
        changed()
        return 0
    }

    private func forgetModems() {
        objects = ModemManagerObjects()
        signalSetUp = []
        bearersAsked = []
        changed()
    }

    /// After every change: set up signal figures where needed, connect modems back
    /// from a reset, and tell the agent when what it uses changed.
    private func changed() {
        for path in objects.modemPaths {
            setUpSignalIfReady(path)
            for bearer in objects.bearerPaths(ofModemAt: path) where !bearersAsked.contains(bearer) { readBearer(bearer) }
        }
        connectModemsBackFromReset()
        guard bearerReadsInFlight == 0 else { return }
        let modems = objects.modems
        guard modems != lastReported else { return }
        lastReported = modems
        onChange?(modems)
    }

    private func readBearer(_ path: String) {
        guard bearersAsked.count < ModemManagerObjects.maximumObjects else { return }
        bearersAsked.insert(path)
        bearerReadsInFlight += 1
        call(path, "org.freedesktop.DBus.Properties", "GetAll", arguments: [.string(ModemManagerObjects.bearerInterface)],
             what: "the properties of bearer \(path)") { [unowned self] reply in
            bearerReadsInFlight -= 1
            if let reply, let properties = BusMessage.read(reply)?.first {
                objects.interfacesAdded(path: path, .dictionary([(.string(ModemManagerObjects.bearerInterface), properties)]))
            }
            changed()
        }
    }

    /// Signal figures are read only once `Setup(rate)` asked for them; a modem takes it
    /// once it is enabled.
    private func setUpSignalIfReady(_ path: String) {
        guard !signalSetUp.contains(path),
              objects.property("Rate", of: ModemManagerObjects.signalInterface, at: path) != nil,
              let facts = objects.facts(ofModemAt: path), facts.state.rawValue >= ModemState.enabled.rawValue else { return }
        signalSetUp.insert(path)
        let seconds = UInt32(max(1, signalIntervalMilliseconds / 1_000))
        call(path, ModemManagerObjects.signalInterface, "Setup", arguments: [.uint32(seconds)],
             what: "Signal.Setup(\(seconds)) on modem \(facts.equipmentID)")
    }

    // MARK: recovery steps

    public func reconnect(_ equipmentID: String) {
        guard let path = objects.modemPath(equipmentID: equipmentID) else {
            return Log.warning("modems: reconnect: modem \(equipmentID) is not on ModemManager now")
        }
        guard let properties = connectProperties(ofModemAt: path) else {
            return Log.warning("modems: reconnect: modem \(equipmentID) has no bearer whose properties could be reused")
        }
        call(path, ModemManagerObjects.simpleInterface, "Disconnect", arguments: [.objectPath("/")],
             what: "Simple.Disconnect on modem \(equipmentID)") { [unowned self] _ in
            // Connect on the modem's current path: a reply can come after it moved.
            guard let current = objects.modemPath(equipmentID: equipmentID) else { return }
            call(current, ModemManagerObjects.simpleInterface, "Connect", arguments: [properties],
                 what: "Simple.Connect on modem \(equipmentID)")
        }
    }

    public func reset(_ equipmentID: String) {
        guard let path = objects.modemPath(equipmentID: equipmentID) else {
            return Log.warning("modems: reset: modem \(equipmentID) is not on ModemManager now")
        }
        if let properties = connectProperties(ofModemAt: path) {
            connectAfterReset[equipmentID] = (properties, loop.nowMilliseconds + ModemManagerClient.resetReturnMilliseconds)
        }
        call(path, ModemManagerObjects.modemInterface, "Reset", what: "Modem.Reset on modem \(equipmentID)")
    }

    public func setBearer(_ equipmentID: String, connected: Bool) {
        guard let path = objects.modemPath(equipmentID: equipmentID) else {
            return Log.warning("modems: standby: modem \(equipmentID) is not on ModemManager now")
        }
        // The bearer's properties are kept from before the disconnect: ModemManager may
        // drop a disconnected bearer, and the connection must use the same APN.
        if let properties = connectProperties(ofModemAt: path) { standbyProperties[equipmentID] = properties }
        if !connected {
            Log.notice("modems: modem \(equipmentID): data bearer disconnected while its uplink stands by cold")
            call(path, ModemManagerObjects.simpleInterface, "Disconnect", arguments: [.objectPath("/")],
                 what: "Simple.Disconnect on modem \(equipmentID) (standby)")
            return
        }
        guard let properties = standbyProperties[equipmentID] else {
            return Log.warning("modems: standby: modem \(equipmentID) has no bearer whose properties could be reused")
        }
        Log.notice("modems: modem \(equipmentID): connecting its data bearer: its uplink is needed")
        call(path, ModemManagerObjects.simpleInterface, "Connect", arguments: [properties],
             what: "Simple.Connect on modem \(equipmentID) (standby)")
    }

    /// A modem back from its reset (a new object) is connected again as it was.
    private func connectModemsBackFromReset() {
        let now = loop.nowMilliseconds
        for (id, pending) in connectAfterReset {
            guard now <= pending.deadlineMilliseconds else {
                connectAfterReset[id] = nil
                Log.warning("modems: modem \(id) did not come back within \(ModemManagerClient.resetReturnMilliseconds / 1_000) s of its reset")
                continue
            }
            // Back means a new object that ModemManager finished probing; the old one
            // may still be listed for a moment after the reset was asked for.
            guard let path = objects.modemPath(equipmentID: id), let facts = objects.facts(ofModemAt: path),
                  facts.state.rawValue >= ModemState.disabled.rawValue, facts.bearers.isEmpty else { continue }
            connectAfterReset[id] = nil
            call(path, ModemManagerObjects.simpleInterface, "Connect", arguments: [pending.properties],
                 what: "Simple.Connect on modem \(id) after its reset")
        }
    }

    /// The properties of the modem's first bearer that `Simple.Connect` takes (its APN
    /// among them), as an `a{sv}`.
    private func connectProperties(ofModemAt path: String) -> DBusValue? {
        for bearer in objects.bearerPaths(ofModemAt: path) {
            guard let properties = objects.property("Properties", of: ModemManagerObjects.bearerInterface, at: bearer)?
                .properties else { continue }
            let kept = properties.filter { ModemManagerClient.connectKeys.contains($0.key) }
                .sorted { $0.key < $1.key }
                .map { (key: DBusValue.string($0.key), value: DBusValue.variant($0.value.unwrapped)) }
            if !kept.isEmpty { return .dictionary(kept) }
        }
        return nil
    }
}

extension String {
    /// nil when empty.
    var nonEmpty: String? { isEmpty ? nil : self }
}
