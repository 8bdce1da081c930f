import UplinkCore

/// ModemManager on the system bus, followed on the agent's event loop (`SystemBus`):
/// its name (attaching whenever it starts or restarts), its ObjectManager (modems
/// appearing and vanishing), every property change under its root (modems, bearers),
/// the signal figures it is asked to set up on each modem; and the recovery steps it
/// is asked to carry out (reconnect the bearer; reset the modem and connect it again).
/// What it follows is kept as `ModemManagerObjects` and told to the agent as
/// `ModemFacts`.
package final class ModemManagerClient: ModemSource {
    package var onChange: (([ModemFacts]) -> Void)?
    private let loop: EventLoop
    private var bus: SystemBus?
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
    /// No system bus to follow ModemManager on, and ModemManager not on the bus: each
    /// logged when it starts, hourly while it lasts, and when it ends.
    private var busMissing = RecurringCondition()
    private var managerAbsent = RecurringCondition()

    static let firstReconnectMilliseconds = 1_000
    static let maximumReconnectMilliseconds = 60_000
    /// A reset modem that is not back within this long is given up on.
    static let resetReturnMilliseconds = 300_000
    /// The keys of a bearer's properties that `Simple.Connect` takes.
    static let connectKeys: Set<String> = ["apn", "ip-type", "allowed-auth", "user", "password", "allow-roaming",
                                           "number", "rm-protocol"]
    private static let root = ModemManagerObjects.root
    private static let service = ModemManagerObjects.service

    package init(loop: EventLoop) {
        self.loop = loop
    }

    deinit {
        stop()
    }

    package func start(signalIntervalMilliseconds: Int) {
        self.signalIntervalMilliseconds = signalIntervalMilliseconds
        connect()
    }

    /// Leaves the bus for good (a one-shot look is over, or the agent stops).
    package func stop() {
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        reconnectTimer = nil
        bus?.close()
        bus = nil
        onChange = nil
    }

    // MARK: the connection

    private func connect() {
        let bus = SystemBus(loop: loop)
        do {
            try bus.open(description: "uplinkd")
        } catch {
            Log.occurred(&busMissing, now: loop.nowMilliseconds, level: .notice, "modems: no system bus (\(error)); trying again later")
            changed()
            return scheduleReconnect()
        }
        do {
            try bus.subscribe("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                              + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'") {
                [unowned self] _, _, arguments in nameOwnerChanged(arguments)
            }
            try bus.subscribe("type='signal',interface='org.freedesktop.DBus.ObjectManager',path='\(Self.root)'") {
                [unowned self] _, member, arguments in objectManagerSignal(member, arguments)
            }
            // Property changes anywhere under ModemManager's root (modems, bearers).
            try bus.subscribe("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                              + "path_namespace='\(Self.root)'") {
                [unowned self] path, _, arguments in propertiesChanged(path, arguments)
            }
        } catch {
            bus.close()
            Log.occurred(&busMissing, now: loop.nowMilliseconds, level: .notice,
                         "modems: cannot follow ModemManager on the system bus (\(error)); trying again later")
            changed()
            return scheduleReconnect()
        }
        bus.onLost = { [unowned self] in
            self.bus = nil
            if present || !objects.isEmpty {
                present = false
                forgetModems()
            }
            scheduleReconnect()
        }
        self.bus = bus
        Log.cleared(&busMissing, now: loop.nowMilliseconds, "modems: on the system bus")
        askWhetherPresent()
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

    /// Calls a method of ModemManager; `reply` gets the reply's arguments, or nil when
    /// the call failed (logged).
    private func call(_ path: String, _ interface: String, _ member: String, arguments: [DBusValue] = [],
                      what: String, reply: @escaping ([DBusValue]?) -> Void = { _ in }) {
        guard let bus else { return reply(nil) }
        bus.call(Self.service, path, interface, member, arguments: arguments) { result in
            switch result {
            case .arguments(let arguments):
                reply(arguments)
            case .error(let name, let message):
                if name.hasSuffix(".ServiceUnknown") || name.hasSuffix(".NameHasNoOwner") {
                    Log.debug("modems: \(what): ModemManager is not on the bus")
                } else {
                    Log.warning("modems: \(what) failed: \(name): \(message.printableEscaped)")
                }
                reply(nil)
            case .failed(let error):
                Log.warning("modems: \(what): \(error)")
                reply(nil)
            }
        }
    }

    // MARK: following ModemManager

    private func askWhetherPresent() {
        bus?.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                  arguments: [.string(Self.service)]) { [unowned self] result in
            guard case .arguments(let arguments) = result, arguments.first?.bool == true else {
                Log.occurred(&managerAbsent, now: loop.nowMilliseconds, level: .notice,
                             "modems: ModemManager is not on the system bus; cellular uplinks are judged by their probes until it is")
                return changed()
            }
            attached()
        }
    }

    /// ModemManager is on the bus: read every object it has.
    private func attached() {
        present = true
        reconnectDelayMilliseconds = ModemManagerClient.firstReconnectMilliseconds
        call(ModemManagerObjects.root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
             what: "GetManagedObjects") { [unowned self] reply in
            guard let managed = reply?.first else { return changed() }
            objects.replaceAll(managed)
            signalSetUp = []
            bearersAsked = []
            let attached = "modems: attached to ModemManager: \(objects.modems.map(\.equipmentID.printableEscaped).joined(separator: ", ").nonEmpty ?? "no modem yet")"
            if managerAbsent.isPresent {
                Log.cleared(&managerAbsent, now: loop.nowMilliseconds, attached)
            } else {
                Log.notice(attached)
            }
            changed()
        }
    }

    private func nameOwnerChanged(_ arguments: [DBusValue]?) {
        guard let arguments, arguments.count == 3, arguments[0].string == Self.service else { return }
        let newOwner = arguments[2].string ?? ""
        if newOwner.isEmpty {
            Log.occurred(&managerAbsent, now: loop.nowMilliseconds, level: .notice,
                         "modems: ModemManager left the bus; cellular uplinks are judged by their probes until it is back")
            present = false
            forgetModems()
        } else {
            Log.info("modems: ModemManager (re)started on the bus")
            attached()
        }
    }

    private func objectManagerSignal(_ member: String, _ arguments: [DBusValue]?) {
        guard present, let arguments, arguments.count == 2, let path = arguments[0].string else { return }
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
            return
        }
        changed()
    }

    private func propertiesChanged(_ path: String, _ arguments: [DBusValue]?) {
        guard present, let arguments, arguments.count == 3, let interface = arguments[0].string else { return }
        objects.propertiesChanged(path: path, interface: interface, changed: arguments[1],
                                  invalidated: (arguments[2].array ?? []).compactMap(\.string))
        changed()
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
            if let properties = reply?.first {
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
             what: "Signal.Setup(\(seconds)) on modem \(facts.equipmentID.printableEscaped)")
    }

    // MARK: recovery steps

    package func reconnect(_ equipmentID: String) {
        guard let path = objects.modemPath(equipmentID: equipmentID) else {
            return Log.warning("modems: reconnect: modem \(equipmentID.printableEscaped) is not on ModemManager now")
        }
        guard let properties = connectProperties(ofModemAt: path) else {
            return Log.warning("modems: reconnect: modem \(equipmentID.printableEscaped) has no bearer whose properties could be reused")
        }
        call(path, ModemManagerObjects.simpleInterface, "Disconnect", arguments: [.objectPath("/")],
             what: "Simple.Disconnect on modem \(equipmentID.printableEscaped)") { [unowned self] _ in
            // Connect on the modem's current path: a reply can come after it moved.
            guard let current = objects.modemPath(equipmentID: equipmentID) else { return }
            call(current, ModemManagerObjects.simpleInterface, "Connect", arguments: [properties],
                 what: "Simple.Connect on modem \(equipmentID.printableEscaped)")
        }
    }

    package func reset(_ equipmentID: String) {
        guard let path = objects.modemPath(equipmentID: equipmentID) else {
            return Log.warning("modems: reset: modem \(equipmentID.printableEscaped) is not on ModemManager now")
        }
        if let properties = connectProperties(ofModemAt: path) {
            connectAfterReset[equipmentID] = (properties, loop.nowMilliseconds + ModemManagerClient.resetReturnMilliseconds)
        }
        call(path, ModemManagerObjects.modemInterface, "Reset", what: "Modem.Reset on modem \(equipmentID.printableEscaped)")
    }

    package func setBearer(_ equipmentID: String, connected: Bool) {
        guard let path = objects.modemPath(equipmentID: equipmentID) else {
            return Log.warning("modems: standby: modem \(equipmentID.printableEscaped) is not on ModemManager now")
        }
        // The bearer's properties are kept from before the disconnect: ModemManager may
        // drop a disconnected bearer, and the connection must use the same APN.
        if let properties = connectProperties(ofModemAt: path) { standbyProperties[equipmentID] = properties }
        if !connected {
            Log.notice("modems: modem \(equipmentID.printableEscaped): data bearer disconnected while its uplink stands by cold")
            call(path, ModemManagerObjects.simpleInterface, "Disconnect", arguments: [.objectPath("/")],
                 what: "Simple.Disconnect on modem \(equipmentID.printableEscaped) (standby)")
            return
        }
        guard let properties = standbyProperties[equipmentID] else {
            return Log.warning("modems: standby: modem \(equipmentID.printableEscaped) has no bearer whose properties could be reused")
        }
        Log.notice("modems: modem \(equipmentID.printableEscaped): connecting its data bearer: its uplink is needed")
        call(path, ModemManagerObjects.simpleInterface, "Connect", arguments: [properties],
             what: "Simple.Connect on modem \(equipmentID.printableEscaped) (standby)")
    }

    /// A modem back from its reset (a new object) is connected again as it was.
    private func connectModemsBackFromReset() {
        let now = loop.nowMilliseconds
        for (id, pending) in connectAfterReset {
            guard now <= pending.deadlineMilliseconds else {
                connectAfterReset[id] = nil
                Log.warning("modems: modem \(id.printableEscaped) did not come back within \(ModemManagerClient.resetReturnMilliseconds / 1_000) s of its reset")
                continue
            }
            // Back means a new object that ModemManager finished probing; the old one
            // may still be listed for a moment after the reset was asked for.
            guard let path = objects.modemPath(equipmentID: id), let facts = objects.facts(ofModemAt: path),
                  facts.state.rawValue >= ModemState.disabled.rawValue, facts.bearers.isEmpty else { continue }
            connectAfterReset[id] = nil
            call(path, ModemManagerObjects.simpleInterface, "Connect", arguments: [pending.properties],
                 what: "Simple.Connect on modem \(id.printableEscaped) after its reset")
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
