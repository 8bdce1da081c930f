/// One probe round as the core asks for it, with what the adapter needs to run it:
/// the uplink, its interface index (per-link DNS state files are keyed by it), its
/// kind (for the report) and what its link allows (the families to probe, or why
/// nothing can be probed).
public struct RoundPlan: Sendable, Equatable {
    public var interface: InterfaceName
    public var index: Int
    public var kind: InterfaceKind
    public var link: LinkEvaluator.Result

    public init(interface: InterfaceName, index: Int, kind: InterfaceKind, link: LinkEvaluator.Result) {
        self.interface = interface
        self.index = index
        self.kind = kind
        self.link = link
    }
}
