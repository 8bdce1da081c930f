import Testing
import UplinkCore
import UplinkTestSupport

@Suite("State facts: one vocabulary")
struct StateFactsTests {
    /// An uplink with every fact set, so none hides behind a default.
    private func everything(operatorName: String = "Vodafone DE") -> UplinkStatus {
        var modem = ModemFacts(equipmentID: "861234567890128", state: .connected, registration: .roaming,
                               operatorName: operatorName, operatorCode: "26202", accessTechnologies: AccessTechnologies(names: "lte,5gnr"),
                               signalQualityPercent: 64)
        modem.signal = SignalFigures(rsrpDBm: -98.5, rsrqDB: -11, sinrDB: 12.4, rssiDBm: -70)
        return UplinkStatus(
            interface: "wwan0", kind: .wwan, verdict: .captive, reason: .redirect, sinceWallSeconds: 1_795_269_709,
            ipv4: .captive, ipv6: .limited, bytesToday: 2_345, budgetBytes: 1_048_576, budgetExhausted: true,
            portalURL: "http://portal.example/login?a=%20b", ipv4Reason: .redirect, ipv6Reason: .dnsFailed,
            dnsSource: .networkmanager, metered: true,
            quality: UplinkQualityStatus(figures: QualityFigures(roundTripMilliseconds: 84, roundTripVariationMilliseconds: 20,
                                                                 lossPercent: 3),
                                         degraded: true, flapPenalty: 1_420, suppressed: true),
            session: CaptivePortalSession(endsWallSeconds: 1_795_273_306, bytesRemaining: 65_536),
            modem: ModemStatus(modem, recoveryStep: .reset, recoveriesTotal: 2),
            plan: PlanStatus(received: 600_000, sent: 200_000, limitBytes: 1_000_000, cycleStartWallSeconds: 1_793_491_200,
                             cycleEndWallSeconds: 1_796_083_200, atCap: .down, capped: false),
            standby: .cold, pinnedConnections: 17)
    }

    private func state(_ uplinks: [UplinkStatus]) -> AgentState {
        var state = AgentState(primary: "eth0", uplinks: uplinks, writtenWallSeconds: 1_795_269_711, pid: 30_655,
                               familyPrimaries: [.ipv4: "eth0", .ipv6: "wlan0"])
        state.decision = 7
        state.hooksDone = 6
        state.spread = "eth0:3,wlan0:1"
        state.provisional = "eth0"
        return state
    }

    private func member(_ name: String, of json: JSONValue) -> JSONValue? {
        guard case .object(let members) = json else { return nil }
        return members.first { $0.0 == name }?.1
    }

    @Test func everyFactRoundTripsThroughTheFileTheJSONAndTheHookEnvironment() throws {
        let uplink = everything()
        let original = state([uplink, UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: .validated,
                                                   sinceWallSeconds: 1)])
        #expect(try StateFileFormat.decode(StateFileFormat.encode(original)) == original)

        let json = original.json
        for fact in StateFacts.node {
            #expect(member(fact.name, of: json) == fact.value(original).json, "\(fact.name)")
        }
        guard case .array(let uplinks) = member("uplinks", of: json) else { Issue.record("no uplinks array"); return }
        var event = HookEvent(kind: .verdict, interface: "wwan0", interfaceKind: .wwan, verdict: .captive, previousVerdict: .online,
                              reason: .redirect, portalURL: uplink.portalURL, primary: "eth0", previousPrimary: "eth0",
                              wallSeconds: 1_795_269_710)
        event.uplink = uplink
        let environment = event.environment
        for fact in StateFacts.uplink {
            let value = fact.value(uplink)
            #expect(!value.isNone, "\(fact.name) is none: the test's uplink must set every fact")
            #expect(member(fact.name, of: uplinks[0]) == value.json, "\(fact.name) in JSON")
            #expect(environment.contains("\(fact.environmentName)=\(value.environmentText)"), "\(fact.name) for hooks")
        }
        #expect(environment.contains("UPLINK_MODEM_OPERATOR=Vodafone DE") && environment.contains("UPLINK_MODEM_RSRP_DBM=-98.5"))
        #expect(environment.contains("UPLINK_PLAN_USED_BYTES=800000") && environment.contains("UPLINK_STANDBY=cold"))
        // Names: one each, as a shell variable can carry them, none twice in a hook's environment.
        let names = (StateFacts.node + []).map(\.name) + StateFacts.uplink.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) } })
        let variables = environment.map { String($0.prefix { $0 != "=" }) }
        #expect(Set(variables).count == variables.count, "\(variables.sorted())")
    }

    @Test func anEventWithoutAnUplinkHasEveryFactEmpty() {
        let event = HookEvent(kind: .stop, interface: nil, interfaceKind: .other, verdict: .unknown, previousVerdict: .unknown,
                              reason: .stopping, portalURL: nil, primary: nil, previousPrimary: nil, wallSeconds: 5)
        for fact in StateFacts.uplink where !["kind", "verdict", "reason", "portal_url"].contains(fact.name) {
            #expect(event.environment.contains("\(fact.environmentName)="), "\(fact.name)")
        }
        #expect(event.environment.contains("UPLINK_VERDICT=unknown") && event.environment.contains("UPLINK_REASON=stopping"))
    }

    /// Operator names and portal URLs come from the network: whatever they hold, each
    /// stays one field of one line, and reads back as it was.
    @Test(arguments: [
        "Vodafone DE", "a\nuplink eth0 verdict online", "100%25 %", "\u{1}\u{7f}\t\r x", "-", "%2D",
        String(repeating: "Ü", count: 2_048), "uplink wwan0 kind ethernet",
    ])
    func hostileValuesCannotAddOrSplitALineOrAFact(_ text: String) throws {
        var uplink = everything(operatorName: text)
        uplink.portalURL = text
        let original = state([uplink])
        let file = StateFileFormat.encode(original)
        let lines = file.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 2 + StateFacts.node.count + StateFacts.uplink.count)
        for line in lines where line.hasPrefix("uplink ") {
            #expect(line.split(separator: " ", omittingEmptySubsequences: false).count == 4, "\(line)")
        }
        #expect(lines.filter { $0.hasPrefix("uplink wwan0 verdict ") } == ["uplink wwan0 verdict captive"])
        let back = try StateFileFormat.decode(file)
        #expect(back.uplinks.count == 1)
        #expect(back.uplinks.first?.modem?.operatorName == text)
        #expect(back.uplinks.first?.portalURL == text)
        #expect(back == original)
    }

    @Test func aDamagedFileIsRefusedWithItsLine() {
        let head = "format 2\nprimary eth0\nuplink eth0 kind ethernet\nuplink eth0 verdict online\nuplink eth0 reason validated\n"
        let cases: [(String, Int, String)] = [
            (head + "uplink eth0 since soon\n", 6, "malformed value of since for eth0"),
            (head + "uplink eth0 since 5 extra\n", 6, "malformed uplink line: expected 'uplink IFACE FACT VALUE'"),
            (head + "uplink eth/0 since 5\n", 6, "malformed uplink line: expected 'uplink IFACE FACT VALUE'"),
            ("format 2\npid many\n", 2, "malformed pid line"),
            (head, 0, "uplink eth0 has no since"),
            (head + "uplink eth0 since 5\nuplink eth0 since 6\n", 7, "since of eth0 given twice"),
            ("format 2\nprimary eth0\nprimary wlan0\n", 3, "primary given twice"),
        ]
        for (text, line, message) in cases {
            #expect(throws: StateFileFormat.DecodeError(line: line, message: message)) { try StateFileFormat.decode(text) }
        }
    }

    /// Found by the state-file fuzz target: a format 1 file listing eth0 twice decoded
    /// to two uplinks that format 2 wrote as one, so the file was no fixed point.
    @Test func anUplinkListedTwiceIsRefused() {
        let line = "uplink eth0 ethernet online validated 100 online - 2345 - no -\n"
        #expect(throws: StateFileFormat.DecodeError(line: 3, message: "uplink eth0 listed twice")) {
            try StateFileFormat.decode("format 1\n" + line + line)
        }
    }

    /// Found by the state-file fuzz target: format 1 read a negative budget (and counts
    /// past what format 2 reads back), which format 2 then wrote and refused. A format 1
    /// file now reads as format 2 can carry it, so it comes back unchanged.
    @Test(arguments: [
        "format 1\nuplink eth0 ethernet online validated 100 online - 234 -5 no -\n",
        "format 1\nuplink eth0 ethernet online validated 100 online - 1 9223372036854775807 no -\n",
        "format 1\nuplink eth0 ethernet online validated 100 online - 1 - no h\u{0}\u{1}//p/%40x\n",
    ])
    func aFormat1FileSurvivesFormat2(_ text: String) throws {
        let state = try StateFileFormat.decode(text)
        let encoded = StateFileFormat.encode(state)
        let again = try StateFileFormat.decode(encoded)
        #expect(StateFileFormat.encode(again) == encoded)
    }

    @Test func statusJSONKeepsTheFirstJSONsObjectsBesideTheFacts() {
        let json = everything().json.serialized()
        #expect(json.contains(#""modem_operator":"Vodafone DE""#))
        #expect(json.contains(#""modem":{"equipment_id":"861234567890128","state":"connected""#))
        #expect(json.contains(#""plan":{"used_bytes":800000"#))
        #expect(json.contains(#""families":{"ipv4":{"verdict":"captive","reason":"redirect"}"#))
    }
}
