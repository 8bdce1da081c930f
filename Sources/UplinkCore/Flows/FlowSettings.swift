/// How the agent routes connections (`[flows]`, and per uplink `tier`, `weight` and
/// `spread` in `[interface NAME]`, traffic classes in `[class NAME]`).
///
/// With pinning on, every connection keeps the uplink its first packet left by: a
/// conntrack mark per uplink, a routing rule per mark and a table per uplink holding
/// that uplink's own default routes. Only new connections follow a new choice, so a
/// primary change costs nothing to connections on an uplink that still works. Off by
/// default: installing the package changes no route.
package struct FlowSettings: Sendable, Equatable {
    package var pinning = false
    package var sticky = FlowStickiness.flow
    /// The first of the flow rules: `lookup main suppress_prefixlength 0` (connected
    /// and LAN routes win over a pinned flow's default route), then one rule per
    /// uplink slot. In front of the route hook's two rules (`rule-priority`).
    package var rulePriority = 32_400
    /// Uplink slot N's table is `tableBase + N`.
    package var tableBase = 7_100
    /// RTPROT_* id of the flow rules and routes: not the route hook's (77), so the
    /// agent's guard of the hook's entries never mistakes them for its own.
    package var protocolNumber = 78
    /// `[class NAME]` sections, in file order: the first that matches a new flow decides.
    package var classes: [FlowClass] = []

    package init() {}

    /// The packet and connection mark bits uplinkd uses: 31 uplink slots, clear of
    /// the low bits most firewalls use and of Tailscale's 0xff0000 bits.
    package static let markMask: UInt32 = 0x1f00_0000
    package static let markShift: UInt32 = 24
    package static let slots = 1...31

    package static func mark(ofSlot slot: Int) -> UInt32 { UInt32(slot) << markShift }

    package func table(ofSlot slot: Int) -> Int { tableBase + slot }
    package func rulePriority(ofSlot slot: Int) -> Int { rulePriority + slot }
}

/// What a new connection is spread by: each connection on its own, or every
/// connection of one LAN host to the same uplink (a bank's session sees one address).
package enum FlowStickiness: String, Sendable, CaseIterable {
    case flow
    case host
}

/// `tier`, `weight` and `spread` of one uplink.
package struct UplinkFlowSettings: Sendable, Equatable {
    /// Uplinks of the primary's tier share new connections; without one, an uplink
    /// carries new connections only as the primary.
    package var tier: Int?
    package var weight: Int?
    /// Joins the spread of its tier (nil: unless metered).
    package var spread: Bool?

    /// Whether the uplink joins the spread of its tier: a metered one only when told
    /// so (`spread = yes`).
    package func joinsSpread(metered: Bool) -> Bool { spread ?? !metered }

    package init(tier: Int? = nil, weight: Int? = nil, spread: Bool? = nil) {
        self.tier = tier
        self.weight = weight
        self.spread = spread
    }
}
