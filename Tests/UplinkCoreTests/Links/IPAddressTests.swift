import Testing
import UplinkCore
import UplinkTestSupport

@Suite("IPAddress")
struct IPAddressTests {
    @Test func parsesIPv4() throws {
        let a = try #require(IPAddress("192.0.2.33"))
        #expect(a.family == .ipv4)
        #expect(a.bytes == [192, 0, 2, 33])
        #expect(a.description == "192.0.2.33")
    }

    @Test(arguments: ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "1..2.3", "a.b.c.d", "1.2.3.4 ", "1234.1.1.1",
                      ":", ":::", "1::2::3", "12345::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "::g", "fe80::1%eth0",
                      "1:2:3:4:5:6:7::8:9", "::1.2.3", "[::1]"])
    func rejectsInvalid(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func parsesIPv6() throws {
        let a = try #require(IPAddress("2001:db8::1"))
        #expect(a.family == .ipv6)
        #expect(a.bytes == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
        let mapped = try #require(IPAddress("::ffff:192.0.2.1"))
        #expect(mapped.bytes == [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1])
        let full = try #require(IPAddress("1:2:3:4:5:6:7:8"))
        #expect(full.bytes == [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8])
    }

    @Test(arguments: [
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("2001:DB8::A", "2001:db8::a"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),      // equal runs: the first is compressed
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),            // the longest run is compressed
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),   // a single zero group is not
        ("::", "::"),
        ("::1", "::1"),
        ("1::", "1::"),
        ("fe80:0:0:0:0:0:0:1", "fe80::1"),
        ("0:0:0:0:0:0:0:0", "::"),
        ("1:0:0:0:0:0:0:0", "1::"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("2001:db8::", "2001:db8::"),
        ("0:1:0:1:0:1:0:1", "0:1:0:1:0:1:0:1"),
        ("abcd:ef01:2345:6789:abcd:ef01:2345:6789", "abcd:ef01:2345:6789:abcd:ef01:2345:6789"),
    ])
    func formatsIPv6PerRFC5952(input: String, expected: String) throws {
        let a = try #require(IPAddress(input))
        #expect(a.description == expected)
        #expect(IPAddress(expected) == a)
    }

    @Test func initFromBytesChecksLength() {
        #expect(IPAddress(family: .ipv4, bytes: [10, 0, 0, 1])?.description == "10.0.0.1")
        #expect(IPAddress(family: .ipv4, bytes: [10, 0, 0]) == nil)
        #expect(IPAddress(family: .ipv6, bytes: [10, 0, 0, 1]) == nil)
        #expect(IPAddress(family: .ipv6, bytes: [UInt8](repeating: 0, count: 16))?.description == "::")
    }

    @Test(arguments: [
        ("169.254.0.1", true), ("169.254.255.255", true), ("169.253.1.1", false), ("170.254.1.1", false),
        ("fe80::1", true), ("febf::1", true), ("fec0::1", false), ("fe7f::1", false), ("2001:db8::1", false),
        ("10.0.0.1", false),
    ])
    func linkLocal(text: String, expected: Bool) throws {
        #expect(try #require(IPAddress(text)).isLinkLocal == expected)
    }

    @Test(arguments: [
        ("10.1.2.3", true), ("172.16.0.1", true), ("172.31.255.255", true), ("172.15.0.1", false), ("172.32.0.1", false),
        ("192.168.1.1", true), ("192.169.1.1", false), ("100.64.0.1", true), ("100.127.255.255", true),
        ("100.63.0.1", false), ("100.128.0.1", false), ("8.8.8.8", false),
        ("fd12:3456::1", true), ("fc00::1", true), ("fe80::1", false), ("2001:db8::1", false),
    ])
    func privateRanges(text: String, expected: Bool) throws {
        #expect(try #require(IPAddress(text)).isPrivate == expected)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("128.0.0.1", false), ("::1", true), ("::2", false), ("::", false),
        ("1::1", false),
    ])
    func loopback(text: String, expected: Bool) throws {
        #expect(try #require(IPAddress(text)).isLoopback == expected)
    }
}
