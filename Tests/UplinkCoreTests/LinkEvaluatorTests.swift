import Testing
import UplinkCore

func address(_ text: String, _ prefix: Int) throws -> InterfaceAddress {
    InterfaceAddress(address: try #require(IPAddress(text)), prefixLength: prefix)
}

func defaultRoute(_ family: AddressFamily, via gateway: String? = nil, metric: Int = 100) -> DefaultRoute {
    DefaultRoute(family: family, gateway: gateway.flatMap(IPAddress.init), metric: metric, table: 254)
}

func facts(adminUp: Bool = true, carrier: Bool = true, addresses: [InterfaceAddress] = [],
           routes: [DefaultRoute] = []) throws -> LinkFacts {
    LinkFacts(name: try #require(InterfaceName("wlan0")), index: 3, adminUp: adminUp, carrier: carrier,
              addresses: addresses, defaultRoutes: routes)
}

@Suite("LinkEvaluator")
struct LinkEvaluatorTests {
    @Test func missingInterface() {
        #expect(LinkEvaluator.evaluate(nil) == .down(reason: "no-such-interface"))
    }

    @Test func adminDownComesFirst() throws {
        let f = try facts(adminUp: false, carrier: false, addresses: [address("192.0.2.10", 24)], routes: [defaultRoute(.ipv4)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: "admin-down"))
    }

    @Test func noCarrier() throws {
        let f = try facts(carrier: false, addresses: [address("192.0.2.10", 24)], routes: [defaultRoute(.ipv4)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: "no-carrier"))
    }

    @Test func noAddress() throws {
        #expect(LinkEvaluator.evaluate(try facts(routes: [defaultRoute(.ipv4)])) == .down(reason: "no-address"))
    }

    @Test func onlyLinkLocalAddresses() throws {
        let f = try facts(addresses: [address("169.254.23.2", 16), address("fe80::1234:56ff:fe78:9abc", 64)],
                          routes: [defaultRoute(.ipv4), defaultRoute(.ipv6)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: "link-local-only"))
    }

    @Test func loopbackIsNotUsable() throws {
        #expect(try !address("127.0.0.1", 8).isUsable)
        #expect(try !address("::1", 128).isUsable)
        #expect(try address("10.0.0.2", 8).isUsable)
        #expect(try address("10.0.0.2", 8).family == .ipv4)
    }

    @Test func usableIPv4WithoutDefaultRoute() throws {
        let f = try facts(addresses: [address("10.231.1.2", 24)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: "no-route"))
    }

    @Test func routeOfTheOtherFamilyDoesNotCount() throws {
        let f = try facts(addresses: [address("10.231.1.2", 24), address("fe80::1", 64)], routes: [defaultRoute(.ipv6)])
        #expect(LinkEvaluator.evaluate(f) == .down(reason: "no-route"))
    }

    @Test func routedIPv4AndLinkLocalIPv6ProbesIPv4Only() throws {
        let f = try facts(addresses: [address("10.231.1.2", 24), address("fe80::1", 64)],
                          routes: [defaultRoute(.ipv4, via: "10.231.1.1"), defaultRoute(.ipv6, via: "fe80::2")])
        #expect(LinkEvaluator.evaluate(f) == .probe([.ipv4]))
    }

    @Test func bothFamiliesRouted() throws {
        let f = try facts(addresses: [address("2001:db8::2", 64), address("fe80::1", 64), address("10.231.1.2", 24)],
                          routes: [defaultRoute(.ipv6, via: "fe80::2"), defaultRoute(.ipv4, via: "10.231.1.1")])
        #expect(LinkEvaluator.evaluate(f) == .probe([.ipv4, .ipv6]))
    }

    @Test func onlyRoutedFamilyIsProbed() throws {
        let f = try facts(addresses: [address("2001:db8::2", 64), address("10.231.1.2", 24)],
                          routes: [defaultRoute(.ipv6, via: "fe80::2")])
        #expect(LinkEvaluator.evaluate(f) == .probe([.ipv6]))
    }
}
