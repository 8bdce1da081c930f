import Testing
import UplinkCore
import UplinkTestSupport

/// The choice of uplink for new connections: tiers, weights, metered uplinks, traffic
/// classes and the doubt, and which uplinks' connections are released.
@Suite("FlowPlan: which uplink takes new connections")
struct FlowPlanTests {
    private func candidate(_ name: InterfaceName, _ slot: Int, usable: Bool = true, takesNew: Bool? = nil,
                           metered: Bool = false) -> FlowCandidate {
        FlowCandidate(name: name, slot: slot, interfaceIndex: slot + 1, usable: usable,
                      takesNewFlows: takesNew ?? usable, metered: metered)
    }

    private func interfaces(_ flows: [InterfaceName: UplinkFlowSettings]) -> [InterfaceName: InterfaceSettings] {
        flows.mapValues { flow in
            var settings = InterfaceSettings()
            settings.flow = flow
            return settings
        }
    }

    private let three = [("eth0", 1), ("wlan0", 2), ("wwan0", 3)]

    private func plan(_ flows: [InterfaceName: UplinkFlowSettings] = [:], candidates: [FlowCandidate]? = nil,
                      primary: InterfaceName? = "eth0", inDoubt: Bool = false, successor: InterfaceName? = nil,
                      classes: [FlowClass] = []) -> FlowPlan {
        var settings = FlowSettings()
        settings.pinning = true
        settings.classes = classes
        let all = candidates ?? [candidate("eth0", 1), candidate("wlan0", 2), candidate("wwan0", 3, metered: true)]
        return FlowPlan(settings: settings, interfaces: interfaces(flows), candidates: all, primary: primary,
                        inDoubt: inDoubt, successor: successor)
    }

    @Test func withoutTiersOnlyThePrimaryTakesNewConnections() {
        let plan = plan()
        #expect(plan.spread == [FlowPlan.Share(slot: 1, weight: 1)])
        #expect(plan.provisional == nil)
        #expect(plan.members.map(\.keeping) == [true, true, true])
    }

    @Test func theUplinksOfThePrimarysTierShareByWeight() {
        let plan = plan(["eth0": .init(tier: 1, weight: 3), "wlan0": .init(tier: 1), "wwan0": .init(tier: 2)])
        #expect(plan.spread == [FlowPlan.Share(slot: 1, weight: 3), FlowPlan.Share(slot: 2, weight: 1)])
        #expect(plan.spreadText == "eth0:3,wlan0:1")
    }

    @Test func aMeteredUplinkJoinsASpreadOnlyWhenToldTo() {
        let tiers: [InterfaceName: UplinkFlowSettings] = ["eth0": .init(tier: 1), "wwan0": .init(tier: 1)]
        #expect(plan(tiers).spread.map(\.slot) == [1])
        #expect(plan(["eth0": .init(tier: 1), "wwan0": .init(tier: 1, spread: true)]).spread.map(\.slot) == [1, 3])
    }

    @Test func anUplinkThatIsNotUsableOrHeldDownLeavesTheSpread() {
        let tiers: [InterfaceName: UplinkFlowSettings] = ["eth0": .init(tier: 1), "wlan0": .init(tier: 1)]
        let down = plan(tiers, candidates: [candidate("eth0", 1), candidate("wlan0", 2, usable: false)])
        #expect(down.spread.map(\.slot) == [1])
        // Online again but waiting out its hold-down: it keeps what it has, takes nothing new.
        let held = plan(tiers, candidates: [candidate("eth0", 1), candidate("wlan0", 2, takesNew: false)])
        #expect(held.spread.map(\.slot) == [1])
        #expect(held.member("wlan0")?.keeping == true)
    }

    @Test func anUplinkThatStopsBeingUsableHasItsConnectionsReleased() {
        let before = plan()
        let after = plan(candidates: [candidate("eth0", 1, usable: false), candidate("wlan0", 2),
                                      candidate("wwan0", 3, metered: true)], primary: "wlan0")
        #expect(after.released(since: before).map(\.name) == ["eth0"])
        // A primary change alone releases nothing: eth0 still works (a failback).
        let failback = plan(primary: "wlan0")
        #expect(failback.released(since: before).isEmpty)
        #expect(failback.spread.map(\.slot) == [2])
        // An uplink gone from the kernel is released too.
        let gone = plan(candidates: [candidate("wlan0", 2)], primary: "wlan0")
        #expect(Set(gone.released(since: before).map(\.name)) == ["eth0", "wwan0"])
    }

    @Test func aDoubtSendsNewConnectionsToTheSuccessorAndKeepsOpenOnes() {
        let doubt = plan(inDoubt: true, successor: "wlan0")
        #expect(doubt.spread.map(\.slot) == [2])
        #expect(doubt.provisional == "eth0")
        // The primary's own connections stay: nothing is released by a doubt.
        #expect(doubt.member("eth0")?.keeping == true)
        #expect(doubt.released(since: plan()).isEmpty)
        // Cleared: back to the primary.
        #expect(plan().spread.map(\.slot) == [1])
    }

    @Test func aDoubtWithinATierLeavesTheRestOfTheTier() {
        let doubt = plan(["eth0": .init(tier: 1, weight: 3), "wlan0": .init(tier: 1)], inDoubt: true, successor: "wwan0")
        #expect(doubt.spread == [FlowPlan.Share(slot: 2, weight: 1)])
    }

    @Test func aDoubtWithNowhereElseToGoChangesNothing() {
        let doubt = plan(candidates: [candidate("eth0", 1)], inDoubt: true, successor: nil)
        #expect(doubt.spread.map(\.slot) == [1])
        #expect(doubt.provisional == nil)
    }

    @Test func noPrimaryNoChoice() {
        let none = plan(candidates: [candidate("eth0", 1, usable: false)], primary: nil)
        #expect(none.spread.isEmpty)
    }

    private func flowClass(_ name: String, uplinks: [InterfaceName], never: [InterfaceName] = []) -> FlowClass {
        var flowClass = FlowClass(name: name)
        flowClass.transport = .tcp
        flowClass.ports = [873...873]
        flowClass.uplinks = uplinks
        flowClass.never = never
        return flowClass
    }

    @Test func aClassTakesItsFirstUsableUplinkAndFallsBackToTheDefaultChoice() {
        let voip = flowClass("voip", uplinks: ["wlan0", "wwan0"])
        #expect(plan(classes: [voip]).classes[0].shares.map(\.slot) == [2])
        let wlanDown = [candidate("eth0", 1), candidate("wlan0", 2, usable: false), candidate("wwan0", 3, metered: true)]
        #expect(plan(candidates: wlanDown, classes: [voip]).classes[0].shares.map(\.slot) == [3])
        let bothDown = [candidate("eth0", 1), candidate("wlan0", 2, usable: false), candidate("wwan0", 3, usable: false)]
        #expect(plan(candidates: bothDown, classes: [voip]).classes[0].shares.map(\.slot) == [1])
    }

    @Test func aClassNeverFallsBackToAnUplinkItForbids() {
        let bulk = flowClass("bulk", uplinks: ["eth0"], never: ["wwan0"])
        let onlyCellular = [candidate("eth0", 1, usable: false), candidate("wlan0", 2, usable: false),
                            candidate("wwan0", 3, metered: true)]
        #expect(plan(candidates: onlyCellular, primary: "wwan0", classes: [bulk]).classes[0].shares.isEmpty)
    }
}
