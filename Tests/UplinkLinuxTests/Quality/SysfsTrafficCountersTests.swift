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
    /// A tree with eth0's counters, and its dev_snmp6 file when `snmp6` is given.
    func counters(_ files: [String: String], snmp6: String? = nil) throws -> (FakeSysfs, SysfsTrafficCounters) {
        let tree = try FakeSysfs()
        do {
            try tree.directory("eth0")
            try tree.directory("eth0/statistics")
            for (name, text) in files { try tree.file("eth0/statistics/\(name)", text) }
            try tree.directory("snmp6")
            if let snmp6 { try tree.file("snmp6/eth0", snmp6) }
        } catch {
            tree.remove()
            throw error
        }
        return (tree, SysfsTrafficCounters(classNetPath: tree.root, snmp6Path: tree.root + "/snmp6"))
    }

    /// The kernel's own router and neighbour solicitations and MLD reports expect no
    /// answer through the upstream: they made the lone-packet rule start a confirming
    /// round now and then on an idle primary (5 % more probe bytes a month).
    @Test func ipv6MulticastIsLeftOut() throws {
        let snmp6 = "ifIndex                         \t7\nIp6InReceives                   \t40\n"
            + "Ip6InMcastPkts                  \t3\nIp6OutMcastPkts                 \t6\nIp6InOctets                     \t9000\n"
        let (tree, withIPv6) = try counters(["rx_packets": "50\n", "tx_packets": "66\n"], snmp6: snmp6)
        defer { tree.remove() }
        let packets = try #require(withIPv6.packets(of: "eth0"))
        #expect(packets.received == 47 && packets.transmitted == 60)
        // A file without the counters (or none: IPv6 off) leaves the device's counts.
        let (bare, plain) = try counters(["rx_packets": "50\n", "tx_packets": "66\n"], snmp6: "ifIndex\t7\n")
        defer { bare.remove() }
        #expect(plain.packets(of: "eth0").map { [$0.received, $0.transmitted] } == [50, 66])
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
