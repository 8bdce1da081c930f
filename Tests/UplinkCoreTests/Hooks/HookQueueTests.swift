import Testing
import UplinkCore
import UplinkTestSupport

@Suite("HookQueue: coalescing")
struct HookQueueTests {
    private func verdict(_ interface: InterfaceName, _ previous: Verdict, _ verdict: Verdict) -> HookEvent {
        HookEvent(kind: .verdict, interface: interface, interfaceKind: .ethernet, verdict: verdict, previousVerdict: previous,
                  reason: .timeout, portalURL: nil, primary: nil, previousPrimary: nil, wallSeconds: 0)
    }

    private func primary(_ new: InterfaceName?, from old: InterfaceName?) -> HookEvent {
        HookEvent(kind: .primary, interface: new ?? old ?? "none", interfaceKind: .ethernet, verdict: .online, previousVerdict: .online,
                  reason: .validated, portalURL: nil, primary: new, previousPrimary: old, wallSeconds: 0)
    }

    @Test func latestVerdictWinsKeepingThePreviousHooksKnew() {
        var queue = HookQueue()
        queue.enqueue(verdict("eth0", .online, .limited))
        queue.enqueue(verdict("eth0", .limited, .captive))
        #expect(queue.pending.count == 1)
        #expect(queue.pending[0].previousVerdict == .online)
        #expect(queue.pending[0].verdict == .captive)
    }

    @Test func aChangeThatUndoesItselfDisappears() {
        var queue = HookQueue()
        queue.enqueue(verdict("eth0", .online, .limited))
        queue.enqueue(verdict("eth0", .limited, .online))
        #expect(queue.isEmpty)
    }

    @Test func primaryEventsKeepTheirOrderAndUplinksStaySeparate() {
        var queue = HookQueue()
        queue.enqueue(primary("wlan0", from: "eth0"))
        queue.enqueue(verdict("eth0", .online, .limited))
        queue.enqueue(primary("eth0", from: "wlan0"))
        queue.enqueue(verdict("wlan0", .online, .captive))
        queue.enqueue(primary("wlan0", from: "eth0"))
        #expect(queue.pending.map(\.kind) == [.primary, .verdict, .primary, .verdict, .primary])
        #expect(queue.next()?.primary == "wlan0")
        #expect(queue.next()?.interface == "eth0")
        #expect(queue.next()?.primary == "eth0")
    }

    @Test func environmentCarriesTheFacts() {
        var event = verdict("wlan0", .online, .captive)
        event.portalURL = "http://portal.example/"
        #expect(event.environment.contains("UPLINK_EVENT=verdict"))
        #expect(event.environment.contains("UPLINK_PREVIOUS=online"))
        #expect(event.environment.contains("UPLINK_VERDICT=captive"))
        #expect(event.environment.contains("UPLINK_PORTAL_URL=http://portal.example/"))
        #expect(event.environment.contains("UPLINK_PRIMARY="))
    }
}
