import Testing
import UplinkCore
import UplinkTestSupport

/// A primary per address family, and the addresses of the uplink given up.
@Suite("AgentCore: primary per family")
struct FamilyPrimaryTests {
    private let everyProbe = Set(CoreDriver.probes().map(\.name))

    /// eth0 and wlan0 dual-stack, every probe of eth0 failing over IPv6, settled.
    private func brokenIPv6OnEthernet() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.failingOverIPv6["eth0"] = everyProbe
        driver.links([dualStack("eth0", index: 2, kind: .ethernet), dualStack("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 1_000)
        return driver
    }

    @Test func anUplinkWithBrokenIPv6KeepsIPv4ButNotIPv6() throws {
        let driver = brokenIPv6OnEthernet()
        #expect(driver.core.verdict(of: "eth0")?.verdict == .online)
        #expect(driver.core.primary == "eth0")
        #expect(driver.core.familyPrimaries == [.ipv4: "eth0", .ipv6: "wlan0"])

        let state = driver.core.state(now: driver.instant, pid: 1)
        #expect(state.familyPrimaries == [.ipv4: "eth0", .ipv6: "wlan0"])
        let text = StateFileFormat.encode(state)
        #expect(text.contains("\nprimary eth0\nprimary_ipv4 eth0\nprimary_ipv6 wlan0\n"))
        #expect(try StateFileFormat.decode(text).familyPrimaries == state.familyPrimaries)

        let event = try #require(driver.hooks.last { $0.kind == .primary })
        #expect(event.environment.contains("UPLINK_PRIMARY=eth0"))
        #expect(event.environment.contains("UPLINK_PRIMARY_IPV4=eth0"))
        #expect(event.environment.contains("UPLINK_PRIMARY_IPV6=wlan0"))
    }

    @Test func whenIPv6ComesBackTheFamilyFollowsThePriorityAgain() throws {
        var driver = brokenIPv6OnEthernet()
        #expect(driver.core.familyPrimaries[.ipv6] == "wlan0")
        let before = driver.hooks.count
        driver.failingOverIPv6 = [:]
        // The next full round sees eth0's IPv6 work again (rounds of an uplink with a
        // failed family are full ones); the family moves back, the primary stays.
        driver.advance(to: 200_000)
        #expect(driver.core.familyPrimaries == [.ipv4: "eth0", .ipv6: "eth0"])
        let event = try #require(driver.hooks[before...].last { $0.kind == .primary })
        #expect(event.primary == "eth0" && event.previousPrimary == "eth0")
        #expect(event.environment.contains("UPLINK_PREVIOUS_PRIMARY_IPV6=wlan0"))
        #expect(event.environment.contains("UPLINK_PRIMARY_IPV6=eth0"))
        // Only IPv6 moved: the conntrack flush gets wlan0's IPv6 addresses, no IPv4 ones.
        #expect(event.environment.contains("UPLINK_PREVIOUS_IPV6_ADDRESSES=2001:db8:4::2"))
        #expect(event.environment.contains("UPLINK_PREVIOUS_IPV4_ADDRESSES="))
    }

    /// eth0 primary, wlan0 online beside it (IPv4 only).
    private func ethernetAndWifi() -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 1_000)
        #expect(driver.core.primary == "eth0")
        return driver
    }

    @Test func thePrimaryEventCarriesTheAddressesOfTheUplinkGivenUp() throws {
        var driver = ethernetAndWifi()
        // eth0 loses its address (the DHCP lease ran out) and with it the primary role.
        var bare = usableLink("eth0", index: 2)
        bare.addresses = []
        driver.links([ObservedUplink(facts: bare, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        #expect(driver.core.primary == "wlan0")
        let event = try #require(driver.hooks.last { $0.kind == .primary })
        #expect(event.environment.contains("UPLINK_PREVIOUS_ADDRESSES=10.0.2.2"))
        #expect(event.environment.contains("UPLINK_IPV4_ADDRESSES=10.0.4.2/24"))
    }

    @Test func anUplinkThatVanishesStillLeavesItsAddresses() throws {
        var driver = ethernetAndWifi()
        driver.links([uplink("wlan0", index: 4, kind: .wifi)], events: [.disappeared(usableLink("eth0", index: 2))])
        driver.answerAll()
        let event = try #require(driver.hooks.last { $0.kind == .primary })
        #expect(event.primary == "wlan0" && event.previousPrimary == "eth0")
        #expect(event.environment.contains("UPLINK_PREVIOUS_ADDRESSES=10.0.2.2"))
    }
}

extension FamilyPrimaryTests {
    @Test func aBetterUplinkArrivingTakesEveryFamilyAtOnce() throws {
        var driver = CoreDriver(CoreDriver.configuration { $0.agent.holdDownMilliseconds = 2_000 })
        driver.links([uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 3)
        driver.links([uplink("eth0", index: 2, kind: .ethernet), uplink("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 10)
        #expect(driver.core.primary == "eth0")
        #expect(driver.core.familyPrimaries == [.ipv4: "eth0"])
        #expect(driver.hooks.filter { $0.kind == .primary }.map { "\($0.previousPrimary?.value ?? "-")>\($0.primary?.value ?? "-")" } == ["->wlan0", "wlan0>eth0"])
    }
}

extension FamilyPrimaryTests {
    /// With hysteresis (two failed rounds to leave online), a whole outage moves every
    /// family together with the primary, not one round earlier.
    @Test func familiesFollowThePrimarysHysteresisInAWholeOutage() throws {
        var driver = CoreDriver(CoreDriver.configuration { $0.probing.failuresToLeaveOnline = 2 })
        driver.links([dualStack("eth0", index: 2, kind: .ethernet), dualStack("wlan0", index: 4, kind: .wifi)])
        driver.answerAll()
        driver.advance(to: 1_000)
        #expect(driver.core.familyPrimaries == [.ipv4: "eth0", .ipv6: "eth0"])
        let before = driver.hooks.count
        driver.dead = ["eth0"]
        driver.advance(to: 300_000)
        #expect(driver.core.primary == "wlan0")
        #expect(driver.core.familyPrimaries == [.ipv4: "wlan0", .ipv6: "wlan0"])
        let changes = driver.hooks[before...].filter { $0.kind == .primary }
        #expect(changes.count == 1)
        #expect(changes.first?.previousPrimary == "eth0" && changes.first?.primary == "wlan0")
    }
}
