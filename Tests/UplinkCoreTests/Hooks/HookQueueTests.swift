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

    private func numbered(_ event: HookEvent, _ decision: Int) -> HookEvent {
        var numbered = event
        numbered.decision = decision
        return numbered
    }

    /// A merged verdict event keeps the older number: decision 3 (a primary event
    /// queued behind it) must not look done when the merged event, carrying 4's
    /// verdict, has run.
    @Test func theHooksCatchUpOnlyPastTheOldestDecisionNotRun() {
        var queue = HookQueue()
        #expect(queue.caughtUp(running: nil, latest: 0) == 0)
        let running = numbered(verdict("wlan0", .online, .down), 1)
        queue.enqueue(numbered(verdict("eth0", .online, .limited), 2))
        queue.enqueue(numbered(primary("wlan0", from: "eth0"), 3))
        queue.enqueue(numbered(verdict("eth0", .limited, .down), 4))
        #expect(queue.pending.map(\.decision) == [2, 3])
        #expect(queue.caughtUp(running: running, latest: 4) == 0)
        #expect(queue.caughtUp(running: nil, latest: 4) == 1)
        let merged = queue.next()
        #expect(merged?.decision == 2 && merged?.verdict == .down)
        #expect(queue.caughtUp(running: merged, latest: 4) == 1)
        #expect(queue.caughtUp(running: nil, latest: 4) == 2)
        _ = queue.next()
        // Nothing waits: every decision, merged ones included, is done.
        #expect(queue.caughtUp(running: nil, latest: 4) == 4)
    }
}
