/// A modem's state as ModemManager reports it (`org.freedesktop.ModemManager1.Modem`
/// `State`, MMModemState), in ModemManager's own numbering.
package enum ModemState: Int, Sendable, CaseIterable {
    case failed = -1
    case unknown = 0
    case initializing = 1
    case locked = 2
    case disabled = 3
    case disabling = 4
    case enabling = 5
    case enabled = 6
    case searching = 7
    case registered = 8
    case disconnecting = 9
    case connecting = 10
    case connected = 11

    /// The name `mmcli` prints.
    package var name: String {
        switch self {
        case .failed: return "failed"
        case .unknown: return "unknown"
        case .initializing: return "initializing"
        case .locked: return "locked"
        case .disabled: return "disabled"
        case .disabling: return "disabling"
        case .enabling: return "enabling"
        case .enabled: return "enabled"
        case .searching: return "searching"
        case .registered: return "registered"
        case .disconnecting: return "disconnecting"
        case .connecting: return "connecting"
        case .connected: return "connected"
        }
    }

    package init(name: String) {
        self = ModemState.allCases.first { $0.name == name } ?? .unknown
    }
}

/// Why a modem is `failed` (MMModemStateFailedReason).
package enum ModemFailedReason: Int, Sendable {
    case none = 0
    case unknown = 1
    case simMissing = 2
    case simError = 3
    case unknownCapabilities = 4
    case esimWithoutProfiles = 5
}

/// The 3GPP registration state (`Modem.Modem3gpp` `RegistrationState`,
/// MMModem3gppRegistrationState).
package enum RegistrationState: Int, Sendable, CaseIterable {
    case idle = 0
    case home = 1
    case searching = 2
    case denied = 3
    case unknown = 4
    case roaming = 5
    case homeSMSOnly = 6
    case roamingSMSOnly = 7
    case emergencyOnly = 8
    case homeCSFBNotPreferred = 9
    case roamingCSFBNotPreferred = 10
    case attachedRLOS = 11

    /// Registered on a network that carries data (SMS-only registrations on LTE are a
    /// combined attach: the data bearer still works).
    package var isRegistered: Bool {
        switch self {
        case .home, .roaming, .homeSMSOnly, .roamingSMSOnly, .homeCSFBNotPreferred, .roamingCSFBNotPreferred: return true
        case .idle, .searching, .denied, .unknown, .emergencyOnly, .attachedRLOS: return false
        }
    }

    /// The name `mmcli` prints.
    package var name: String {
        switch self {
        case .idle: return "idle"
        case .home: return "home"
        case .searching: return "searching"
        case .denied: return "denied"
        case .unknown: return "unknown"
        case .roaming: return "roaming"
        case .homeSMSOnly: return "home-sms-only"
        case .roamingSMSOnly: return "roaming-sms-only"
        case .emergencyOnly: return "emergency-services-only"
        case .homeCSFBNotPreferred: return "home-csfb-not-preferred"
        case .roamingCSFBNotPreferred: return "roaming-csfb-not-preferred"
        case .attachedRLOS: return "attached-rlos"
        }
    }

    package init?(name: String) {
        guard let state = RegistrationState.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }
}

/// The radio access technologies a modem uses now (MMModemAccessTechnology bits).
package struct AccessTechnologies: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Each bit with the name `mmcli` prints, the newest technologies last.
    package static let named: [(bit: UInt32, name: String)] = [
        (1 << 0, "pots"), (1 << 1, "gsm"), (1 << 2, "gsm-compact"), (1 << 3, "gprs"), (1 << 4, "edge"),
        (1 << 5, "umts"), (1 << 6, "hsdpa"), (1 << 7, "hsupa"), (1 << 8, "hspa"), (1 << 9, "hspa-plus"),
        (1 << 10, "1xrtt"), (1 << 11, "evdo0"), (1 << 12, "evdoa"), (1 << 13, "evdob"), (1 << 14, "lte"),
        (1 << 15, "5gnr"), (1 << 16, "lte-cat-m"), (1 << 17, "lte-nb-iot"),
    ]

    /// `lte`, `lte,5gnr`; empty when none is known.
    package var names: String {
        AccessTechnologies.named.filter { rawValue & $0.bit != 0 }.map(\.name).joined(separator: ",")
    }

    package init(names: String) {
        let wanted = Set(names.split(separator: ",").map(String.init))
        self.init(rawValue: AccessTechnologies.named.filter { wanted.contains($0.name) }.reduce(0) { $0 | $1.bit })
    }
}

/// Signal figures a modem reports through ModemManager's Signal interface (after
/// `Setup(rate)`), for its newest technology: RSRP, RSRQ and SINR for LTE and 5G,
/// RSSI for older technologies. Nil: not reported.
package struct SignalFigures: Sendable, Equatable {
    package var rsrpDBm: Double?
    package var rsrqDB: Double?
    package var sinrDB: Double?
    package var rssiDBm: Double?

    package init(rsrpDBm: Double? = nil, rsrqDB: Double? = nil, sinrDB: Double? = nil, rssiDBm: Double? = nil) {
        self.rsrpDBm = rsrpDBm
        self.rsrqDB = rsrqDB
        self.sinrDB = sinrDB
        self.rssiDBm = rssiDBm
    }
}

/// One data bearer of a modem.
package struct BearerFacts: Sendable, Equatable {
    /// Its D-Bus object path (the adapter's handle for it).
    package var path: String
    package var connected: Bool
    /// The network interface its data flows through, once connected (`wwan0`); PPP
    /// bearers name their serial port.
    package var interface: String?

    package init(path: String, connected: Bool, interface: String? = nil) {
        self.path = path
        self.connected = connected
        self.interface = interface
    }
}

/// What ModemManager says of one modem: everything the agent uses, read off its D-Bus
/// objects by the adapter, keyed by the equipment identifier (the IMEI), which stays
/// when the modem re-enumerates under a new object path.
package struct ModemFacts: Sendable, Equatable {
    package var equipmentID: String
    package var state: ModemState
    package var failedReason: ModemFailedReason?
    /// Nil for a modem without 3GPP (or before ModemManager read it).
    package var registration: RegistrationState?
    package var operatorName: String?
    package var operatorCode: String?
    package var accessTechnologies: AccessTechnologies
    /// ModemManager's 0-100 figure (from CSQ or the like).
    package var signalQualityPercent: Int?
    package var signal: SignalFigures
    package var bearers: [BearerFacts]
    /// Its ports' names (`ttyUSB2`, `cdc-wdm0`, `wwan0`): a network port names the
    /// interface its data can flow through.
    package var ports: [String]

    package init(equipmentID: String, state: ModemState, failedReason: ModemFailedReason? = nil,
                registration: RegistrationState? = nil, operatorName: String? = nil, operatorCode: String? = nil,
                accessTechnologies: AccessTechnologies = [], signalQualityPercent: Int? = nil,
                signal: SignalFigures = SignalFigures(), bearers: [BearerFacts] = [], ports: [String] = []) {
        self.equipmentID = equipmentID
        self.state = state
        self.failedReason = failedReason
        self.registration = registration
        self.operatorName = operatorName
        self.operatorCode = operatorCode
        self.accessTechnologies = accessTechnologies
        self.signalQualityPercent = signalQualityPercent
        self.signal = signal
        self.bearers = bearers
        self.ports = ports
    }

    /// The interfaces its connected bearers carry data through.
    package var dataInterfaces: [String] {
        bearers.filter(\.connected).compactMap(\.interface)
    }
}

extension ModemFacts {
    /// The modem that carries the uplink `name`: the one `binding` names (none for
    /// `modem = none`), else the one whose connected bearer or whose port names the
    /// interface (the first by equipment identifier, should two claim it).
    package static func carrying(_ name: InterfaceName, binding: ModemBinding?, among modems: [ModemFacts]) -> ModemFacts? {
        switch binding {
        case .noModem?:
            return nil
        case .equipment(let id)?:
            return modems.first { $0.equipmentID == id }
        case nil:
            return modems.sorted { $0.equipmentID < $1.equipmentID }
                .first { $0.dataInterfaces.contains(name.value) || $0.ports.contains(name.value) }
        }
    }
}
