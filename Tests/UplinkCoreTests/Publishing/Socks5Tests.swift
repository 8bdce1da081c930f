import Testing
import UplinkCore
import UplinkTestSupport

/// The SOCKS5 messages the agent's MQTT relay reads from libmosquitto, and where the
/// agent's own connection goes.
@Suite("SOCKS5 and the agent's own traffic")
struct Socks5Tests {
    @Test func aGreetingOfferingNoAuthenticationIsAccepted() {
        #expect(Socks5.greeting([5, 1, 0][...]) == .complete(true, bytes: 3))
        #expect(Socks5.greeting([5, 2, 0, 2, 0xAA][...]) == .complete(true, bytes: 4), "what follows is left")
        #expect(Socks5.greeting([][...]) == .incomplete)
        #expect(Socks5.greeting([5][...]) == .incomplete)
        #expect(Socks5.greeting([5, 2, 0][...]) == .incomplete)
        #expect(Socks5.methodChosen == [5, 0])
    }

    @Test func anyOtherGreetingIsRefusedWithAReason() {
        #expect(Socks5.greeting([4, 1, 0][...]) == .invalid("not SOCKS5 (version byte 4)"))
        #expect(Socks5.greeting([5, 0][...]) == .invalid("a greeting that offers no method"))
        #expect(Socks5.greeting([5, 1, 2][...]) == .invalid("a greeting without the no-authentication method"))
    }

    @Test func connectRequestsToEveryKindOfAddress() {
        let v4: [UInt8] = [5, 1, 0, 1, 203, 0, 113, 10, 0x07, 0x5B]
        #expect(Socks5.request(v4[...]) == .complete(Socks5.Target(host: .address(IPAddress("203.0.113.10")!), port: 1883),
                                                    bytes: 10))
        let v6: [UInt8] = [5, 1, 0, 4] + IPAddress("2001:db8::10")!.bytes + [0x22, 0xB3]
        #expect(Socks5.request(v6[...]) == .complete(Socks5.Target(host: .address(IPAddress("2001:db8::10")!), port: 8883),
                                                    bytes: 22))
        let name = Array("broker.example.net".utf8)
        let named: [UInt8] = [5, 1, 0, 3, UInt8(name.count)] + name + [0x07, 0x5B]
        #expect(Socks5.request(named[...]) == .complete(Socks5.Target(host: .name("broker.example.net"), port: 1883),
                                                       bytes: 5 + name.count + 2))
        #expect(Socks5.Target(host: .address(IPAddress("2001:db8::10")!), port: 8883).description == "[2001:db8::10]:8883")
    }

    @Test func everyPrefixOfARequestIsIncompleteNotWrong() {
        let name = Array("broker.example.net".utf8)
        let named: [UInt8] = [5, 1, 0, 3, UInt8(name.count)] + name + [0x07, 0x5B]
        for length in 0..<named.count {
            #expect(Socks5.request(named.prefix(length)) == .incomplete, "\(length) bytes")
        }
    }

    @Test func anythingElseIsRefused() {
        #expect(Socks5.request([5, 2, 0, 1, 1, 2, 3, 4, 0, 80][...]) == .invalid("command 2 (only CONNECT, 1, is relayed)"))
        #expect(Socks5.request([5, 1, 1, 1, 1, 2, 3, 4, 0, 80][...]) == .invalid("a reserved byte that is not 0"))
        #expect(Socks5.request([5, 1, 0, 9, 1, 2, 3, 4, 0, 80][...]) == .invalid("address type 9"))
        #expect(Socks5.request([5, 1, 0, 1, 1, 2, 3, 4, 0, 0][...]) == .invalid("port 0"))
        #expect(Socks5.request([4, 1, 0, 1, 1, 2, 3, 4, 0, 80][...]) == .invalid("not SOCKS5 (version byte 4)"))
        let hostile = Array("bad name\n;rm".utf8)
        #expect(Socks5.request(([5, 1, 0, 3, UInt8(hostile.count)] + hostile + [0, 80])[...])
                == .invalid("a host name that is not one (bad name\\u{a};rm)"))
    }

    @Test func randomBytesNeverCrashTheReader() {
        var generator = SplitMix(seed: 42)
        for _ in 0..<2_000 {
            let bytes = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = Socks5.greeting(bytes[...])
            _ = Socks5.request(bytes[...])
        }
    }

    @Test func theReplySaysWhatHappened() {
        #expect(Socks5.reply(.succeeded) == [5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(Socks5.reply(.connectionRefused)[1] == 5)
    }

    // MARK: where the agent's own connection goes

    let lan = link("lan0", index: 9, addresses: [address("192.168.77.1", 24)])
    let eth0 = link("eth0", index: 2, addresses: [address("10.233.1.2", 24)])

    @Test func aHostOnTheInternetIsReachedThroughThePrimary() {
        #expect(OwnTrafficRoute.of(IPAddress("203.0.113.10")!, links: [lan, eth0], primary: "wlan0") == .primary("wlan0"))
    }

    @Test func aHostOnAnAttachedNetworkOrLoopbackIsLeftToTheKernel() {
        #expect(OwnTrafficRoute.of(IPAddress("192.168.77.20")!, links: [lan, eth0], primary: "wlan0") == .system)
        #expect(OwnTrafficRoute.of(IPAddress("10.233.1.77")!, links: [lan, eth0], primary: "wlan0") == .system)
        #expect(OwnTrafficRoute.of(IPAddress("127.0.0.1")!, links: [lan, eth0], primary: "wlan0") == .system)
    }

    @Test func withoutAPrimaryAnInternetHostIsLeftToTheKernelUntilThereIsOne() {
        #expect(OwnTrafficRoute.of(IPAddress("203.0.113.10")!, links: [lan, eth0], primary: nil) == .unrouted)
        #expect(OwnTrafficRoute.of(IPAddress("192.168.77.20")!, links: [lan, eth0], primary: nil) == .system)
    }

    @Test func prefixesAreComparedBitForBit() {
        #expect(address("10.0.0.1", 9).contains(IPAddress("10.127.255.255")!))
        #expect(!address("10.0.0.1", 9).contains(IPAddress("10.128.0.0")!))
        #expect(address("2001:db8::1", 33).contains(IPAddress("2001:db8:7fff::1")!))
        #expect(!address("2001:db8::1", 33).contains(IPAddress("2001:db8:8000::1")!))
        #expect(!address("10.0.0.1", 8).contains(IPAddress("::ffff:10.0.0.1")!), "another family")
        #expect(address("10.0.0.1", 0).contains(IPAddress("198.51.100.1")!))
    }
}

/// A small deterministic generator for the hostile-input loop.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
