/// What sysfs says about an interface, gathered by an adapter, judged here.
package struct KindEvidence: Sendable, Equatable {
    /// `DEVTYPE=` from the interface's uevent (wlan, wwan, bridge, vlan, ...).
    package var devType: String?
    /// A `wireless/` or `phy80211/` directory exists.
    package var hasWirelessDirectory: Bool
    /// The device sits in the kernel's wwan subsystem.
    package var inWWANSubsystem: Bool
    /// Name of the driver module (`device/driver` link), if any.
    package var driver: String?
    /// ARPHRD_* link type from `type`.
    package var hardwareType: Int?
    /// The interface is backed by a bus device (`device` link), not purely virtual.
    package var hasDevice: Bool

    package init(devType: String? = nil, hasWirelessDirectory: Bool = false, inWWANSubsystem: Bool = false,
                driver: String? = nil, hardwareType: Int? = nil, hasDevice: Bool = false) {
        self.devType = devType
        self.hasWirelessDirectory = hasWirelessDirectory
        self.inWWANSubsystem = inWWANSubsystem
        self.driver = driver
        self.hardwareType = hardwareType
        self.hasDevice = hasDevice
    }
}

/// Classifies interfaces as ethernet, wifi, wwan or other.
///
/// Order: a configured kind always wins; then definite sysfs evidence; then the
/// predictable-name convention; else `other`.
package enum KindClassifier {
    static let arphrdEther = 1
    static let arphrdPPP = 512
    static let arphrdLoopback = 772
    static let arphrdNone = 65534
    static let arphrdRawIP = 519

    /// Drivers of cellular modems that present a network interface.
    static let wwanDrivers: Set<String> = [
        "qmi_wwan", "cdc_mbim", "huawei_cdc_ncm", "sierra_net", "option", "mhi_net", "ipa",
        "qcom-ipa", "cdc_ether_wwan", "gobinet", "rmnet", "t7xx", "iosm",
    ]

    package static func classify(name: InterfaceName, evidence: KindEvidence?, configured: InterfaceKind?) -> InterfaceKind {
        if let configured { return configured }
        if let evidence, let kind = fromSysfs(evidence) { return kind }
        return fromName(name) ?? .other
    }

    /// A definite answer from sysfs, or nil when sysfs cannot tell.
    package static func fromSysfs(_ evidence: KindEvidence) -> InterfaceKind? {
        switch evidence.devType {
        case "wlan": return .wifi
        case "wwan": return .wwan
        case "bridge", "bond", "vlan", "macvlan", "vxlan", "wireguard", "tun", "tap", "dsa", "team":
            return .other
        default: break
        }
        if evidence.hasWirelessDirectory { return .wifi }
        if evidence.inWWANSubsystem { return .wwan }
        if let driver = evidence.driver, wwanDrivers.contains(driver) { return .wwan }
        switch evidence.hardwareType {
        case arphrdPPP, arphrdRawIP, arphrdNone: return .wwan
        case arphrdLoopback: return .other
        case arphrdEther: return evidence.hasDevice ? .ethernet : nil
        default: return nil
        }
    }

    /// The systemd/udev predictable names and their classic forms.
    package static func fromName(_ name: InterfaceName) -> InterfaceKind? {
        let name = name.value
        if name.hasPrefix("wl") { return .wifi }
        if name.hasPrefix("ww") { return .wwan }
        if name.hasPrefix("en") || name.hasPrefix("eth") { return .ethernet }
        return nil
    }
}
