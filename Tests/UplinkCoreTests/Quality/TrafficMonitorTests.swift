import Testing
import UplinkCore
import UplinkTestSupport

@Suite("TrafficMonitor: passive stall detection")
struct TrafficMonitorTests {
    @Test func packetsLeavingWithNothingBackForTheWindowIsAStall() {
        var monitor = TrafficMonitor()
        #expect(monitor.sample(receivedPackets: 100, transmittedPackets: 100, at: 0, windowMilliseconds: 1_500) == .quiet)
        #expect(monitor.sample(receivedPackets: 110, transmittedPackets: 112, at: 250, windowMilliseconds: 1_500)
            == .flowing(answered: true))
        // The upstream dies: retransmissions leave, nothing comes back.
        var results: [TrafficMonitor.Observation] = []
        for step in 2...8 {
            results.append(monitor.sample(receivedPackets: 110, transmittedPackets: 112 + UInt64(step), at: step * 250,
                                          windowMilliseconds: 1_500))
        }
        #expect(results.filter { $0 == .stalled }.count == 1)
        #expect(results.firstIndex(of: .stalled) == 5)  // at 1750 ms: 1500 ms after the last packet came back
    }

    @Test func quietIsNotAStall() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 5, transmittedPackets: 5, at: 0, windowMilliseconds: 1_500)
        for second in 1...10 {
            #expect(monitor.sample(receivedPackets: 5, transmittedPackets: 5, at: second * 1_000, windowMilliseconds: 1_500) == .quiet)
        }
        #expect(monitor.nextSampleMilliseconds == TrafficMonitor.idleSampleMilliseconds)
    }

    @Test func oneLonePacketIsNotAStall() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 5, transmittedPackets: 5, at: 0, windowMilliseconds: 1_500)
        #expect(monitor.sample(receivedPackets: 5, transmittedPackets: 6, at: 2_000, windowMilliseconds: 1_500) == .flowing(answered: false))
        #expect(monitor.sample(receivedPackets: 5, transmittedPackets: 6, at: 4_000, windowMilliseconds: 1_500) == .quiet)
        #expect(monitor.sample(receivedPackets: 5, transmittedPackets: 7, at: 4_250, windowMilliseconds: 1_500) == .stalled)
    }

    @Test func anAnswerEndsTheStallAndArmsTheNextOne() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 0, transmittedPackets: 0, at: 0, windowMilliseconds: 1_000)
        #expect(monitor.sample(receivedPackets: 0, transmittedPackets: 3, at: 1_000, windowMilliseconds: 1_000) == .stalled)
        #expect(monitor.sample(receivedPackets: 0, transmittedPackets: 4, at: 1_250, windowMilliseconds: 1_000) == .flowing(answered: false))
        #expect(monitor.sample(receivedPackets: 3, transmittedPackets: 5, at: 1_500, windowMilliseconds: 1_000) == .flowing(answered: true))
        #expect(monitor.sample(receivedPackets: 3, transmittedPackets: 8, at: 2_500, windowMilliseconds: 1_000) == .stalled)
        #expect(monitor.nextSampleMilliseconds == TrafficMonitor.busySampleMilliseconds)
    }

    @Test func anOddPacketBackIsNoAnswerButStillEndsTheStall() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 0, transmittedPackets: 0, at: 0, windowMilliseconds: 1_000)
        // An ARP reply, or one ICMP error for twelve packets sent: not answered traffic.
        #expect(monitor.sample(receivedPackets: 1, transmittedPackets: 3, at: 250, windowMilliseconds: 1_000) == .flowing(answered: false))
        #expect(monitor.sample(receivedPackets: 2, transmittedPackets: 15, at: 500, windowMilliseconds: 1_000) == .flowing(answered: false))
        #expect(monitor.sample(receivedPackets: 12, transmittedPackets: 25, at: 750, windowMilliseconds: 1_000) == .flowing(answered: true))
    }

    @Test func neighbourUpkeepIsNoAnswer() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 0, transmittedPackets: 0, at: 0, windowMilliseconds: 1_500)
        // After a probe both ends refresh their neighbour entries: an ARP request and
        // reply each way, two packets in and two out. It must not postpone a probe.
        #expect(monitor.sample(receivedPackets: 2, transmittedPackets: 2, at: 1_000, windowMilliseconds: 1_500)
            == .flowing(answered: false))
    }

    @Test func countersThatGoBackStartOver() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 500, transmittedPackets: 500, at: 0, windowMilliseconds: 1_000)
        #expect(monitor.sample(receivedPackets: 1, transmittedPackets: 9, at: 5_000, windowMilliseconds: 1_000) == .quiet)
    }

    @Test func samplingStaysFastWhileAnAnswerIsAwaitedAndSlowsDownAfter() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 10, transmittedPackets: 10, at: 0, windowMilliseconds: 1_500)
        _ = monitor.sample(receivedPackets: 20, transmittedPackets: 20, at: 250, windowMilliseconds: 1_500)
        #expect(monitor.nextSampleMilliseconds == TrafficMonitor.busySampleMilliseconds)
        // One packet leaves and waits for its answer: fast, to measure a stall to the sample.
        _ = monitor.sample(receivedPackets: 20, transmittedPackets: 21, at: 500, windowMilliseconds: 1_500)
        _ = monitor.sample(receivedPackets: 20, transmittedPackets: 21, at: 1_600, windowMilliseconds: 1_500)
        #expect(monitor.nextSampleMilliseconds == TrafficMonitor.busySampleMilliseconds)
        // The window passed with that one packet: no stall, and back to slow sampling.
        #expect(monitor.sample(receivedPackets: 20, transmittedPackets: 21, at: 2_000, windowMilliseconds: 1_500) == .quiet)
        #expect(monitor.nextSampleMilliseconds == TrafficMonitor.idleSampleMilliseconds)
    }

    @Test func excusedTrafficIsNeitherAStallNorAnAnswer() {
        var monitor = TrafficMonitor()
        _ = monitor.sample(receivedPackets: 0, transmittedPackets: 0, at: 0, windowMilliseconds: 1_000)
        // A probe of the agent's own: 6 out, 5 back (its last ACK unanswered).
        monitor.excuse(receivedPackets: 5, transmittedPackets: 6, at: 250)
        // One unrelated packet later (a router solicitation) is no stall.
        #expect(monitor.sample(receivedPackets: 5, transmittedPackets: 7, at: 2_000, windowMilliseconds: 1_000) == .flowing(answered: false))
        #expect(monitor.sample(receivedPackets: 5, transmittedPackets: 7, at: 3_000, windowMilliseconds: 1_000) == .quiet)
    }
}
