import Testing
import UplinkCore
import UplinkTestSupport

/// The agent's own packets left out of the primary's counters: never a counter that
/// goes back, never the LAN's packets hidden behind an over-count.
@Suite("Own traffic left out of the counters")
struct OwnTrafficFilterTests {
    private func counts(_ received: UInt64, _ transmitted: UInt64) -> OwnTrafficFilter.Counts {
        OwnTrafficFilter.Counts(received: received, transmitted: transmitted)
    }

    @Test func theAgentsOwnPacketsAreLeftOut() {
        var filter = OwnTrafficFilter()
        #expect(filter.filtered("eth0", device: counts(100, 100), own: counts(10, 10)) == counts(90, 90))
        // 5 LAN packets each way and 3 of the agent's.
        #expect(filter.filtered("eth0", device: counts(108, 108), own: counts(13, 13)) == counts(95, 95))
    }

    @Test func ownSegmentsRunningAheadOfTheDevicesPacketsNeverTurnTheCountersBack() {
        var filter = OwnTrafficFilter()
        _ = filter.filtered("eth0", device: counts(100, 100), own: counts(10, 10))
        // One MQTT write of 3 segments left as one GSO packet: the device counted 1.
        let after = filter.filtered("eth0", device: counts(100, 101), own: counts(10, 13))
        #expect(after == counts(90, 90))
        // The LAN's next packet (a SYN into a cut) is seen at once, not swallowed by
        // the 2 segments the connection counted ahead.
        #expect(filter.filtered("eth0", device: counts(100, 102), own: counts(10, 13)) == counts(90, 91))
        // Stall detection reads these: nothing came back while one packet left, and the
        // monitor keeps its measure of the silence (a counter going back would reset it).
        var monitor = TrafficMonitor()
        var sampler = OwnTrafficFilter()
        _ = monitor.sample(receivedPackets: 0, transmittedPackets: 0, at: 0, windowMilliseconds: 1_500)
        for (time, device, own) in [(100, counts(50, 50), counts(0, 0)), (200, counts(50, 51), counts(0, 3)),
                                    (300, counts(50, 52), counts(0, 3)), (400, counts(50, 52), counts(0, 3)),
                                    (500, counts(50, 52), counts(0, 3)), (600, counts(50, 52), counts(0, 3))] {
            let handed = sampler.filtered("eth0", device: device, own: own)
            let observation = monitor.sample(receivedPackets: handed.received, transmittedPackets: handed.transmitted,
                                              at: time, windowMilliseconds: 1_500,
                                              lone: TrafficMonitor.LonePacket(windowMilliseconds: 300))
            if time == 600 { #expect(observation == .lonePacket) }
        }
    }

    @Test func aDeviceCreatedAgainStartsFromItsTotals() {
        var filter = OwnTrafficFilter()
        _ = filter.filtered("wwan0", device: counts(1_000, 1_000), own: counts(10, 10))
        #expect(filter.filtered("wwan0", device: counts(40, 30), own: counts(12, 12)) == counts(28, 18))
    }

    @Test func eachInterfaceKeepsItsOwnSeries() {
        var filter = OwnTrafficFilter()
        _ = filter.filtered("eth0", device: counts(100, 100), own: counts(0, 0))
        _ = filter.filtered("eth0", device: counts(100, 101), own: counts(0, 4))   // 3 ahead
        _ = filter.filtered("wlan0", device: counts(10, 10), own: counts(4, 4))
        // Back on eth0: its series goes on (3 new LAN packets), never from the totals,
        // which would be 3 below what the monitor saw last.
        #expect(filter.filtered("eth0", device: counts(100, 104), own: counts(0, 4)) == counts(100, 103))
    }
}
