#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
import UplinkCore
import UplinkLinux
import UplinkTestSupport

@Suite("SysfsTrafficCounters on a fake sysfs tree")
struct SysfsTrafficCountersTests {
    func counters(_ files: [String: String]) throws -> (FakeSysfs, SysfsTrafficCounters) {
        let tree = try FakeSysfs()
        do {
            try tree.directory("eth0")
            try tree.directory("eth0/statistics")
            for (name, text) in files { try tree.file("eth0/statistics/\(name)", text) }
        } catch {
            tree.remove()
            throw error
        }
        return (tree, SysfsTrafficCounters(classNetPath: tree.root))
    }

    @Test func readsBothCountersAsSysfsRendersThem() throws {
        let (tree, counters) = try counters(["rx_packets": "18446744073709551615\n", "tx_packets": "0\n"])
        defer { tree.remove() }
        let packets = try #require(counters.packets(of: "eth0"))
        #expect(packets.received == UInt64.max)
        #expect(packets.transmitted == 0)
        // Kept open and read again from offset 0: the same answer, not end of file.
        #expect(counters.packets(of: "eth0")?.received == UInt64.max)
    }

    @Test func somethingThatIsNotACounterIsNoAnswer() throws {
        for bad in ["", "\n", "12a\n", "-1\n", "18446744073709551616\n"] {
            let (tree, counters) = try counters(["rx_packets": bad, "tx_packets": "5\n"])
            defer { tree.remove() }
            #expect(counters.packets(of: "eth0") == nil, "rx_packets \(bad.debugDescription)")
        }
    }

    @Test func anInterfaceWithoutCountersIsNoAnswer() throws {
        let (tree, counters) = try counters(["rx_packets": "1\n", "tx_packets": "2\n"])
        defer { tree.remove() }
        #expect(counters.packets(of: "wlan0") == nil)
        #expect(counters.packets(of: "eth0")?.transmitted == 2)
    }
}
