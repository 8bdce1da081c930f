/// Which uplink carries which connection, as decided from the verdicts at one moment:
/// the uplinks that keep their pinned connections, how new connections are shared
/// out, where each traffic class goes, and where the gateway's own new connections
/// go. The Linux adapter renders it as nftables rules and policy routes
/// (`FlowRuleset`), and releases the connections of an uplink that left `keeping`.
package struct FlowPlan: Sendable, Equatable {
    /// One uplink with a mark of its own.
    package struct Member: Sendable, Equatable {
        package var name: InterfaceName
        /// 1...31: its mark is `slot << 24`, its table `table-base + slot`.
        package var slot: Int
        package var interfaceIndex: Int
        /// Usable: the connections pinned to it stay there.
        package var keeping: Bool

        package init(name: InterfaceName, slot: Int, interfaceIndex: Int, keeping: Bool) {
            self.name = name
            self.slot = slot
            self.interfaceIndex = interfaceIndex
            self.keeping = keeping
        }

        package var mark: UInt32 { FlowSettings.mark(ofSlot: slot) }
    }

    /// One uplink's part of a spread of new connections.
    package struct Share: Sendable, Equatable {
        package var slot: Int
        package var weight: Int

        package init(slot: Int, weight: Int) {
            self.slot = slot
            self.weight = weight
        }
    }

    /// Where a traffic class's new connections go now.
    package struct ClassChoice: Sendable, Equatable {
        package var flowClass: FlowClass
        /// Its first usable uplink, or the default spread without its `never` uplinks.
        /// Empty: none is left, and the class's new connections are dropped rather
        /// than sent where `never` forbids.
        package var shares: [Share]
    }

    package var members: [Member] = []
    /// New connections of the LAN, by weight (empty: none of uplinkd's choosing).
    package var spread: [Share] = []
    package var classes: [ClassChoice] = []
    package var sticky = FlowStickiness.flow
    /// The primary is in doubt and new connections avoid it (the provisional choice).
    package var provisional: InterfaceName?

    package init() {}

    package func member(_ name: InterfaceName) -> Member? { members.first { $0.name == name } }
    package func member(slot: Int) -> Member? { members.first { $0.slot == slot } }

    /// Uplinks that kept their connections in `earlier` and no longer do (or are
    /// gone): their connections are to be released.
    package func released(since earlier: FlowPlan) -> [Member] {
        earlier.members.filter { old in old.keeping && member(old.name)?.keeping != true }
    }

    /// The spread's names and weights, for status and the state file: `eth0:3,wlan0:1`.
    package var spreadText: String {
        spread.compactMap { share in member(slot: share.slot).map { "\($0.name):\(share.weight)" } }.joined(separator: ",")
    }
}

/// One uplink as the flow choice sees it.
package struct FlowCandidate: Sendable, Equatable {
    package var name: InterfaceName
    package var slot: Int
    package var interfaceIndex: Int
    /// Online and neither suppressed nor cut off by its data plan.
    package var usable: Bool
    /// Usable, and not waiting out a hold-down or degraded for a while.
    package var takesNewFlows: Bool
    package var metered: Bool

    package init(name: InterfaceName, slot: Int, interfaceIndex: Int, usable: Bool, takesNewFlows: Bool, metered: Bool) {
        self.name = name
        self.slot = slot
        self.interfaceIndex = interfaceIndex
        self.usable = usable
        self.takesNewFlows = takesNewFlows
        self.metered = metered
    }
}

extension FlowPlan {
    /// The plan for `candidates`: new connections go to the primary's tier, shared by
    /// weight among its usable members (the primary alone when it has no tier); while
    /// the primary is in doubt they avoid it and go to the rest of its tier, or to
    /// `successor` (the uplink that would take over).
    package init(settings: FlowSettings, interfaces: [InterfaceName: InterfaceSettings], candidates: [FlowCandidate],
                primary: InterfaceName?, inDoubt: Bool, successor: InterfaceName?) {
        self.init()
        sticky = settings.sticky
        members = candidates.sorted { $0.slot < $1.slot }.map {
            Member(name: $0.name, slot: $0.slot, interfaceIndex: $0.interfaceIndex, keeping: $0.usable)
        }
        let byName = Dictionary(uniqueKeysWithValues: candidates.map { ($0.name, $0) })
        func share(_ name: InterfaceName) -> Share? {
            byName[name].map { Share(slot: $0.slot, weight: interfaces[name]?.flow.weight ?? 1) }
        }
        var tierMembers: [InterfaceName] = []
        if let primary, byName[primary]?.usable == true {
            tierMembers = [primary]
            if let tier = interfaces[primary]?.flow.tier {
                tierMembers += candidates.filter { candidate in
                    let flow = interfaces[candidate.name]?.flow ?? UplinkFlowSettings()
                    return candidate.name != primary && candidate.takesNewFlows && flow.tier == tier
                        && flow.joinsSpread(metered: candidate.metered)
                }.map(\.name).sorted()
            }
        }
        var chosen = tierMembers
        if inDoubt, let primary, tierMembers.contains(primary) {
            chosen.removeAll { $0 == primary }
            if chosen.isEmpty, let successor, successor != primary, byName[successor]?.usable == true { chosen = [successor] }
            if chosen.isEmpty {
                chosen = [primary]
            } else {
                provisional = primary
            }
        }
        spread = chosen.compactMap(share)
        classes = settings.classes.map { flowClass in
            if let first = flowClass.uplinks.first(where: { byName[$0]?.usable == true }), let share = share(first) {
                return ClassChoice(flowClass: flowClass, shares: [Share(slot: share.slot, weight: 1)])
            }
            let avoided = Set(flowClass.never.compactMap { byName[$0]?.slot })
            return ClassChoice(flowClass: flowClass, shares: spread.filter { !avoided.contains($0.slot) })
        }
    }
}
