import UplinkCore

/// Gathers kind evidence for an interface from sysfs. The root is a parameter so tests
/// can hand it a fake tree.
package struct SysfsKindReader: KindReading, Sendable {
    package let classNetPath: String

    package init(classNetPath: String = "/sys/class/net") {
        self.classNetPath = classNetPath
    }

    /// Evidence for `name`, or nil when sysfs has no such interface.
    package func evidence(for name: InterfaceName) -> KindEvidence? {
        let base = "\(classNetPath)/\(name.value)"
        guard SmallFile.exists(base) else { return nil }
        var evidence = KindEvidence()
        if let uevent = SmallFile.read("\(base)/uevent") {
            for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
                evidence.devType = String(line.dropFirst("DEVTYPE=".count))
            }
        }
        evidence.hasWirelessDirectory = SmallFile.exists("\(base)/wireless") || SmallFile.exists("\(base)/phy80211")
        evidence.hasDevice = SmallFile.exists("\(base)/device")
        evidence.driver = SmallFile.linkTargetName("\(base)/device/driver")
        evidence.inWWANSubsystem = SmallFile.linkTargetName("\(base)/device/subsystem") == "wwan"
        if let type = SmallFile.read("\(base)/type", limit: 32) {
            evidence.hardwareType = Int(type.trimmingWhitespace)
        }
        return evidence
    }

    package func kind(of name: InterfaceName, configured: InterfaceKind?) -> InterfaceKind {
        KindClassifier.classify(name: name, evidence: evidence(for: name), configured: configured)
    }
}
