/// What sort of link an uplink is; used for display, priorities and metering.
public enum InterfaceKind: String, Sendable, CaseIterable {
    case ethernet
    case wifi
    case wwan
    case other
}
