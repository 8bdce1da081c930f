import UplinkCore

/// Tells an interface's kind (sysfs, or a fake tree in tests).
package protocol KindReading {
    func kind(of name: InterfaceName, configured: InterfaceKind?) -> InterfaceKind
}
