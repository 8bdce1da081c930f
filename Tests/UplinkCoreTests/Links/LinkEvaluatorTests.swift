import Testing
import UplinkCore
import UplinkTestSupport

@Suite("LinkEvaluator")
struct LinkEvaluatorTests {
    @Test func missingInterface() {
        #expect(LinkEvaluator.evaluate(nil) == .down(reason: .noSuchInterface))
    }

    @Test func adminDownComesFirst() throws {
        let f = link(adminUp: false, carrier: false, addresses: [address("192.0.2.10", 24)], routes: [defaultRoute(.ipv4)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: .adminDown))
    }

    @Test func noCarrier() throws {
        let f = link(carrier: false, addresses: [address("192.0.2.10", 24)], routes: [defaultRoute(.ipv4)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: .noCarrier))
    }

    @Test func noAddress() throws {
        #expect(LinkEvaluator.evaluate(link(routes: [defaultRoute(.ipv4)])) == .down(reason: .noAddress))
    }

    @Test func onlyLinkLocalAddresses() throws {
        let f = link(addresses: [address("169.254.23.2", 16), address("fe80::1234:56ff:fe78:9abc", 64)],
                          routes: [defaultRoute(.ipv4), defaultRoute(.ipv6)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: .linkLocalOnly))
    }

    @Test func loopbackIsNotUsable() throws {
        #expect(try !address("127.0.0.1", 8).isUsable)
        #expect(try !address("::1", 128).isUsable)
        #expect(address("10.0.0.2", 8).isUsable)
        #expect(address("10.0.0.2", 8).family == .ipv4)
    }

    @Test func usableIPv4WithoutDefaultRoute() throws {
        let f = link(addresses: [address("10.231.1.2", 24)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: .noRoute))
    }

    @Test func routeOfTheOtherFamilyDoesNotCount() throws {
        let f = link(addresses: [address("10.231.1.2", 24), address("fe80::1", 64)], routes: [defaultRoute(.ipv6)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: .noRoute))
    }

    @Test func routedIPv4AndLinkLocalIPv6ProbesIPv4Only() throws {
        let f = link(addresses: [address("10.231.1.2", 24), address("fe80::1", 64)],
                          routes: [defaultRoute(.ipv4, via: "10.231.1.1"), defaultRoute(.ipv6, via: "fe80::2")])
        #expect(LinkEvaluator.evaluate(f) == .probe([.ipv4]))
    }

    @Test func bothFamiliesRouted() throws {
        let f = link(addresses: [address("2001:db8::2", 64), address("fe80::1", 64), address("10.231.1.2", 24)],
                          routes: [defaultRoute(.ipv6, via: "fe80::2"), defaultRoute(.ipv4, via: "10.231.1.1")])
        #expect(LinkEvaluator.evaluate(f) == .probe([.ipv4, .ipv6]))
    }

    @Test func onlyRoutedFamilyIsProbed() throws {
        let f = link(addresses: [address("2001:db8::2", 64), address("10.231.1.2", 24)],
                          routes: [defaultRoute(.ipv6, via: "fe80::2")])
        #expect(LinkEvaluator.evaluate(f) == .probe([.ipv6]))
    }
}
