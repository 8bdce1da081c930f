/// ModemManager's D-Bus objects as the adapter follows them (the ObjectManager's
/// `GetManagedObjects`, `InterfacesAdded`/`InterfacesRemoved`, and
/// `PropertiesChanged`), and what they say of each modem. Pure: the adapter reads the
/// messages into `DBusValue`s and hands them here.
package struct ModemManagerObjects: Sendable {
    package static let service = "org.freedesktop.ModemManager1"
    package static let root = "/org/freedesktop/ModemManager1"
    package static let modemInterface = "org.freedesktop.ModemManager1.Modem"
    package static let threeGPPInterface = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
    package static let signalInterface = "org.freedesktop.ModemManager1.Modem.Signal"
    package static let simpleInterface = "org.freedesktop.ModemManager1.Modem.Simple"
    package static let bearerInterface = "org.freedesktop.ModemManager1.Bearer"
    /// More objects than any gateway has modems, SIMs and bearers: a bound on memory
    /// whatever the bus sends.
    package static let maximumObjects = 512
    package static let maximumPropertiesPerInterface = 256

    /// Object path → interface → property → value.
    private var objects: [String: [String: [String: DBusValue]]] = [:]

    package init() {}

    package var isEmpty: Bool { objects.isEmpty }

    /// The reply of `GetManagedObjects` (`a{oa{sa{sv}}}`), replacing everything.
    package mutating func replaceAll(_ managed: DBusValue) {
        objects = [:]
        for (path, interfaces) in managed.properties ?? [:] { interfacesAdded(path: path, interfaces) }
    }

    /// `InterfacesAdded(o, a{sa{sv}})`.
    package mutating func interfacesAdded(path: String, _ interfaces: DBusValue) {
        guard path.hasPrefix(ModemManagerObjects.root) else { return }
        guard objects[path] != nil || objects.count < ModemManagerObjects.maximumObjects else { return }
        for (interface, properties) in interfaces.properties ?? [:] {
            var current = objects[path]?[interface] ?? [:]
            for (name, value) in properties.properties ?? [:]
            where current[name] != nil || current.count < ModemManagerObjects.maximumPropertiesPerInterface {
                current[name] = value.unwrapped
            }
            objects[path, default: [:]][interface] = current
        }
    }

    /// `InterfacesRemoved(o, as)`.
    package mutating func interfacesRemoved(path: String, _ interfaces: [String]) {
        for interface in interfaces { objects[path]?[interface] = nil }
        if objects[path]?.isEmpty == true { objects[path] = nil }
    }

    /// `PropertiesChanged(s, a{sv}, as)` of an object already known (a signal about
    /// one not yet known waits for its `InterfacesAdded`).
    package mutating func propertiesChanged(path: String, interface: String, changed: DBusValue, invalidated: [String]) {
        guard objects[path]?[interface] != nil else { return }
        for (name, value) in changed.properties ?? [:] where objects[path]![interface]!.count < ModemManagerObjects.maximumPropertiesPerInterface
            || objects[path]![interface]![name] != nil {
            objects[path]![interface]![name] = value.unwrapped
        }
        for name in invalidated { objects[path]![interface]![name] = nil }
    }

    /// The object paths of the modems, in path order.
    package var modemPaths: [String] {
        objects.keys.filter { objects[$0]?[ModemManagerObjects.modemInterface] != nil }.sorted()
    }

    /// Every modem with an equipment identifier (one still being probed has none yet).
    package var modems: [ModemFacts] {
        modemPaths.compactMap(facts(ofModemAt:))
    }

    /// The path of the modem with this equipment identifier.
    package func modemPath(equipmentID: String) -> String? {
        modemPaths.first { objects[$0]?[ModemManagerObjects.modemInterface]?["EquipmentIdentifier"]?.string == equipmentID }
    }

    /// A property of an object, if known.
    package func property(_ name: String, of interface: String, at path: String) -> DBusValue? {
        objects[path]?[interface]?[name]
    }

    /// The modem's bearers, in the order ModemManager lists them.
    package func bearerPaths(ofModemAt path: String) -> [String] {
        (property("Bearers", of: ModemManagerObjects.modemInterface, at: path)?.array ?? []).compactMap(\.string)
    }

    package func facts(ofModemAt path: String) -> ModemFacts? {
        guard let modem = objects[path]?[ModemManagerObjects.modemInterface],
              let id = modem["EquipmentIdentifier"]?.string, !id.isEmpty else { return nil }
        let threeGPP = objects[path]?[ModemManagerObjects.threeGPPInterface]
        var facts = ModemFacts(equipmentID: id, state: modem["State"]?.integer.flatMap(ModemState.init(rawValue:)) ?? .unknown)
        facts.failedReason = modem["StateFailedReason"]?.integer.flatMap(ModemFailedReason.init(rawValue:))
        facts.registration = threeGPP?["RegistrationState"]?.integer.flatMap(RegistrationState.init(rawValue:))
        facts.operatorName = threeGPP?["OperatorName"]?.string.flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
        facts.operatorCode = threeGPP?["OperatorCode"]?.string.flatMap { $0.isEmpty ? nil : String($0.prefix(16)) }
        facts.accessTechnologies = AccessTechnologies(rawValue: UInt32(truncatingIfNeeded: modem["AccessTechnologies"]?.integer ?? 0))
        if let quality = modem["SignalQuality"]?.structure?.first?.integer, (0...100).contains(quality) {
            facts.signalQualityPercent = quality
        }
        facts.signal = signal(at: path, technologies: facts.accessTechnologies)
        facts.ports = (modem["Ports"]?.array ?? []).compactMap { $0.structure?.first?.string }
        facts.bearers = bearerPaths(ofModemAt: path).map { bearer in
            let properties = objects[bearer]?[ModemManagerObjects.bearerInterface]
            let interface = properties?["Interface"]?.string
            return BearerFacts(path: bearer, connected: properties?["Connected"]?.bool ?? false,
                               interface: interface?.isEmpty == false ? interface : nil)
        }
        return facts
    }

    /// The newest technology's figures: 5G NR when the modem uses it and reports them,
    /// else LTE; RSSI from whichever technology reports one.
    private func signal(at path: String, technologies: AccessTechnologies) -> SignalFigures {
        let signal = objects[path]?[ModemManagerObjects.signalInterface]
        func figures(_ name: String) -> [String: DBusValue] { signal?[name]?.properties ?? [:] }
        let nr = figures("Nr5g"), lte = figures("Lte")
        let newest = technologies.rawValue & (1 << 15) != 0 && nr["rsrp"]?.double != nil ? nr : lte
        var result = SignalFigures(rsrpDBm: newest["rsrp"]?.double, rsrqDB: newest["rsrq"]?.double,
                                   sinrDB: newest["snr"]?.double)
        result.rssiDBm = ["Lte", "Umts", "Gsm", "Cdma", "Evdo"].lazy.compactMap { figures($0)["rssi"]?.double }.first
        return result
    }
}
