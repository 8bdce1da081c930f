import UplinkCore

// Test-only conveniences: interface names written as string literals ("eth0"). An
// invalid literal is a mistake in the test itself, so it stops the test run.
extension InterfaceName: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let name = InterfaceName(value) else { preconditionFailure("not an interface name: \(value)") }
        self = name
    }
}

// Priority entries as written in the configuration: a kind, else an interface name.
extension PriorityEntry: ExpressibleByStringLiteral {
    package init(stringLiteral value: String) {
        if let kind = InterfaceKind(rawValue: value) {
            self = .kind(kind)
        } else {
            self = .interface(InterfaceName(stringLiteral: value))
        }
    }
}
