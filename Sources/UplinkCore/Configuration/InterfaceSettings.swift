/// What `[interface NAME]` sets for one interface.
package struct InterfaceSettings: Sendable, Equatable {
    /// Overrides the detected kind.
    package var kind: InterfaceKind?
    /// This uplink's DNS servers, instead of discovering them.
    package var dnsServers: [IPAddress]?
    /// Which modem carries it (`modem = EQUIPMENT-ID` or `none`); nil: the modem whose
    /// bearer or port names the interface.
    package var modem: ModemBinding?
    /// Its own probing settings, over those of its kind.
    package var probing: ProbingOverrides
    /// Its share of new connections (`tier`, `weight`, `spread`).
    package var flow = UplinkFlowSettings()

    package init(kind: InterfaceKind? = nil, dnsServers: [IPAddress]? = nil, modem: ModemBinding? = nil,
                probing: ProbingOverrides = ProbingOverrides()) {
        self.kind = kind
        self.dnsServers = dnsServers
        self.modem = modem
        self.probing = probing
    }
}

/// How an uplink is tied to a ModemManager modem.
package enum ModemBinding: Sendable, Equatable {
    /// The modem with this equipment identifier (the IMEI `mmcli -m N` shows).
    case equipment(String)
    /// `none`: the modem's word is not taken for this uplink.
    case noModem
}
