import Testing
import UplinkCore
import UplinkTestSupport

/// A modem as ModemManager shows a healthy LTE one: registered at home, its bearer
/// connected through `wwan0`.
func modem(_ state: ModemState = .connected, registration: RegistrationState? = .home, rsrp: Double? = -95,
           bearerConnected: Bool = true, id: String = "861234567890128", port: String = "wwan0") -> ModemFacts {
    var facts = ModemFacts(equipmentID: id, state: state, registration: registration, operatorName: "Uplink Test",
                           operatorCode: "00101", accessTechnologies: AccessTechnologies(names: "lte"),
                           signalQualityPercent: 64, signal: SignalFigures(rsrpDBm: rsrp, rsrqDB: -10),
                           ports: ["ttyUSB2", port])
    facts.bearers = [BearerFacts(path: "/org/freedesktop/ModemManager1/Bearer/0", connected: bearerConnected,
                                 interface: bearerConnected ? port : nil)]
    return facts
}

@Suite("Modems: the modem's own word")
struct ModemEvidenceTests {
    @Test func statesAndRegistrationsThatCannotCarryData() {
        var failed = modem(.failed, registration: nil)
        failed.failedReason = .simMissing
        #expect(ModemEvidence.cannotCarryData(failed) == .simMissing)
        failed.failedReason = .unknown
        #expect(ModemEvidence.cannotCarryData(failed) == .modemFailed)
        #expect(ModemEvidence.cannotCarryData(modem(.locked, registration: nil)) == .simLocked)
        #expect(ModemEvidence.cannotCarryData(modem(.disabled, registration: nil)) == .modemDisabled)
        for registration in [RegistrationState.idle, .searching, .denied, .unknown, .emergencyOnly] {
            #expect(ModemEvidence.cannotCarryData(modem(.enabled, registration: registration)) == .modemNotRegistered,
                    "\(registration)")
        }
        #expect(ModemEvidence.cannotCarryData(modem(.searching, registration: nil)) == .modemNotRegistered)
        #expect(ModemEvidence.cannotCarryData(modem(.registered, bearerConnected: false)) == .bearerDisconnected)
        #expect(ModemEvidence.cannotCarryData(modem(.connected)) == nil)
        #expect(ModemEvidence.cannotCarryData(modem(.connected, registration: .roaming)) == nil)
    }

    @Test func aModemWhoseDataAnotherToolKeepsSaysNothingWhileRegistered() {
        var registered = modem(.registered)
        registered.bearers = []
        #expect(ModemEvidence.cannotCarryData(registered) == nil)
        // Once ModemManager kept its data, no bearer means no data (back from a reset).
        #expect(ModemEvidence.cannotCarryData(registered, dataManaged: true) == .bearerDisconnected)
    }

    @Test func aModemInPassageKeepsItsLastWord() {
        for state in [ModemState.unknown, .initializing, .enabling, .connecting, .disconnecting] {
            #expect(ModemEvidence.cannotCarryData(modem(state), previous: .modemDisabled) == .modemDisabled)
            #expect(ModemEvidence.cannotCarryData(modem(state), previous: nil) == nil)
        }
    }

    @Test func theLadderRunsOnlyWhileRegistered() {
        #expect(ModemEvidence.isRegistered(modem(.connected), evidence: nil))
        #expect(ModemEvidence.isRegistered(modem(.registered, bearerConnected: false), evidence: .bearerDisconnected))
        #expect(!ModemEvidence.isRegistered(modem(.searching, registration: .searching), evidence: .modemNotRegistered))
        #expect(!ModemEvidence.isRegistered(modem(.enabling, registration: nil), evidence: nil))
    }
}

@Suite("Modems: the recovery ladder")
struct RecoveryLadderTests {
    private let settings = RecoverySettings()

    /// Feeds the ladder "registered, not online" every second from `from` to `to`;
    /// the steps it took, with when.
    private func steps(_ ladder: inout RecoveryLadder, from: Int, to: Int, online: Bool = false, registered: Bool = true,
                       settings: RecoverySettings = RecoverySettings()) -> [(RecoveryStep, Int)] {
        stride(from: from, through: to, by: 1_000).compactMap { time in
            ladder.observe(online: online, registered: registered, at: time, settings: settings).map { ($0, time) }
        }
    }

    @Test func reconnectThenResetEachOnceAnEpisode() {
        var ladder = RecoveryLadder()
        let taken = steps(&ladder, from: 0, to: 3_600_000)
        #expect(taken.map(\.0) == [.reconnect, .reset])
        #expect(taken.map(\.1) == [120_000, 600_000])
        #expect(ladder.stepsTaken == 2)
        #expect(ladder.nextDueMilliseconds(settings) == nil)
    }

    @Test func aPowerCycleStepWhenConfigured() {
        var settings = RecoverySettings()
        settings.powerCycleAfterMilliseconds = 1_800_000
        var ladder = RecoveryLadder()
        #expect(steps(&ladder, from: 0, to: 3_600_000, settings: settings).map(\.1) == [120_000, 600_000, 1_800_000])
        #expect(ladder.step == .powerCycle)
        // Without a reset step, the power cycle follows the reconnect.
        settings.resetAfterMilliseconds = nil
        ladder = RecoveryLadder()
        #expect(steps(&ladder, from: 0, to: 3_600_000, settings: settings).map(\.0) == [.reconnect, .powerCycle])
    }

    @Test func theLadderStartsAgainOnlyAfterTheUplinkWasOnlineForRecoverAfter() {
        var ladder = RecoveryLadder()
        _ = steps(&ladder, from: 0, to: 130_000)
        #expect(ladder.step == .reconnect)
        // Online for a minute, then failing again: the episode goes on (reset next).
        _ = steps(&ladder, from: 131_000, to: 190_000, online: true)
        #expect(ladder.step == .reconnect)
        var taken = steps(&ladder, from: 191_000, to: 900_000)
        #expect(taken.map(\.0) == [.reset])
        // Online for recover-after: a new episode starts with a reconnect.
        _ = steps(&ladder, from: 901_000, to: 1_021_000, online: true)
        #expect(ladder.step == nil)
        taken = steps(&ladder, from: 1_022_000, to: 1_022_000 + 120_000)
        #expect(taken.map(\.0) == [.reconnect])
    }

    @Test func atMostOneResetPerHalfHour() {
        var ladder = RecoveryLadder()
        var taken = steps(&ladder, from: 0, to: 700_000)
        #expect(taken.map(\.1) == [120_000, 600_000])
        _ = steps(&ladder, from: 701_000, to: 821_000, online: true)
        taken = steps(&ladder, from: 822_000, to: 2_500_000)
        // Reconnect at 822 + 120 s; the reset waits for 600 + 1 800 s, not 822 + 600 s.
        #expect(taken.map(\.0) == [.reconnect, .reset])
        #expect(taken.map(\.1) == [942_000, 2_400_000])
    }

    @Test func anUnregisteredModemStartsNoEpisodeButOneUnderWayGoesOn() {
        var ladder = RecoveryLadder()
        #expect(steps(&ladder, from: 0, to: 3_600_000, registered: false).isEmpty)
        #expect(ladder.troubleSinceMilliseconds == nil)
        _ = steps(&ladder, from: 3_600_000, to: 3_720_000)
        #expect(ladder.step == .reconnect)
        // A reset modem drops its registration on the way back; the clock runs on.
        _ = steps(&ladder, from: 3_721_000, to: 3_900_000, registered: false)
        #expect(steps(&ladder, from: 4_200_000, to: 4_200_000).map(\.0) == [.reset])
    }

    @Test func recoverNoTurnsItOff() {
        var settings = RecoverySettings()
        settings.enabled = false
        var ladder = RecoveryLadder()
        #expect(steps(&ladder, from: 0, to: 3_600_000, settings: settings).isEmpty)
        #expect(ladder.nextDueMilliseconds(settings) == nil)
    }
}

@Suite("Modems: in the agent core")
struct ModemAgentTests {
    private let wwan0 = ObservedUplink(facts: usableLink("wwan0", index: 4), kind: .wwan)
    private let eth0 = ObservedUplink(facts: usableLink("eth0", index: 2), kind: .ethernet)

    private func started(_ change: (inout Configuration) -> Void = { _ in }) -> CoreDriver {
        var driver = CoreDriver(CoreDriver.configuration {
            $0.probing.intervalMilliseconds = 30_000
            change(&$0)
        })
        driver.modems([modem()])
        driver.links([wwan0])
        driver.answerAll()
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .online)
        return driver
    }

    /// The agent follows ModemManager only where a modem could be: a gateway with one
    /// ethernet uplink never looks for a system bus (`modemmanager = auto`).
    @Test func modemManagerIsWantedOnlyForAnUplinkAModemCouldCarry() {
        var driver = CoreDriver(CoreDriver.configuration())
        driver.links([eth0])
        #expect(!driver.core.wantsModems)
        driver.links([eth0, wwan0])
        #expect(driver.core.wantsModems)

        var usb = CoreDriver(CoreDriver.configuration { $0.interfaces["wwan0"] = InterfaceSettings(modem: .noModem) })
        usb.links([eth0, wwan0])
        #expect(!usb.core.wantsModems, "modem = none: no modem's word for wwan0")
        var tied = CoreDriver(CoreDriver.configuration { $0.interfaces["eth0"] = InterfaceSettings(modem: .equipment("861234567890128")) })
        tied.links([eth0])
        #expect(tied.core.wantsModems, "eth0 is tied to a modem by its equipment identifier")
        var always = CoreDriver(CoreDriver.configuration { $0.agent.modems.use = .always })
        #expect(always.core.wantsModems, "modemmanager = yes: from the start")
        always.links([eth0])
        var never = CoreDriver(CoreDriver.configuration { $0.agent.modems.use = .never })
        never.links([eth0, wwan0])
        #expect(!never.core.wantsModems)
    }

    @Test func modemManagerSettingReads() throws {
        for (text, use) in [("auto", ModemManagerUse.auto), ("yes", .always), ("on", .always), ("no", .never)] {
            let configuration = try ConfigurationParser(fileName: "t.conf").parse("[agent]\nmodemmanager = \(text)\n")
            #expect(configuration.agent.modems.use == use, "\(text)")
        }
        #expect(Configuration().agent.modems.use == .auto)
        #expect(throws: ConfigurationError.self) { try ConfigurationParser(fileName: "t.conf").parse("[agent]\nmodemmanager = maybe\n") }
    }

    @Test func registrationLostIsDownAtOnceAndCostsNoProbeUntilItIsBack() {
        var driver = started()
        let rounds = driver.plans(of: "wwan0").count
        driver.now = 1_000
        driver.modems([modem(.searching, registration: .searching)])
        #expect(driver.core.verdict(of: "wwan0") == Assessment(.down, reason: .modemNotRegistered))
        #expect(driver.hooks.last?.kind == .primary && driver.hooks.last?.primary == nil)
        driver.advance(to: 3_600_000)
        #expect(driver.plans(of: "wwan0").count == rounds)
        // Registered again: a full round at once decides.
        driver.modems([modem()], at: 3_600_500)
        #expect(driver.plans(of: "wwan0").count == rounds + 1)
        #expect(driver.plans(of: "wwan0").last?.purpose == .full)
        driver.answerAll()
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .online)
    }

    @Test func everyReasonOfTheModemReachesTheVerdictAndTheState() {
        var driver = started()
        var failed = modem(.failed, registration: nil)
        failed.failedReason = .simMissing
        let cases: [(ModemFacts, Reason)] = [
            (modem(.disabled, registration: nil), .modemDisabled), (failed, .simMissing),
            (modem(.locked, registration: nil), .simLocked), (modem(.registered, bearerConnected: false), .bearerDisconnected),
        ]
        for (facts, reason) in cases {
            driver.modems([facts])
            #expect(driver.core.verdict(of: "wwan0") == Assessment(.down, reason: reason))
            let status = driver.core.state(now: driver.instant, pid: 1).uplinks.first
            #expect(status?.modem?.state == facts.state)
            #expect(status?.reason == reason)
        }
    }

    @Test func whichModemCarriesWhichUplink() {
        // By its port (or connected bearer) name.
        var driver = started()
        driver.modems([modem(.enabled, registration: .denied, port: "wwan1")])
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .online)
        // By equipment identifier, whatever its ports.
        driver = started { $0.interfaces["wwan0"] = InterfaceSettings(modem: .equipment("861234567890128")) }
        driver.modems([modem(.enabled, registration: .denied, port: "ttyUSB3")])
        #expect(driver.core.verdict(of: "wwan0")?.reason == .modemNotRegistered)
        // Not at all.
        driver = started { $0.interfaces["wwan0"] = InterfaceSettings(modem: .noModem) }
        driver.modems([modem(.enabled, registration: .denied)])
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .online)
        #expect(driver.core.state(now: driver.instant, pid: 1).uplinks.first?.modem == nil)
    }

    @Test func modemManagerGoingAwayProvesNothing() {
        var driver = started()
        driver.modems([modem(.enabled, registration: .searching)])
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .down)
        driver.modems([])
        driver.answerAll()
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .online)
    }

    @Test func aWeakSignalIsDegradedWithFiveDecibelsOfHysteresis() {
        var driver = started()
        func degraded() -> Bool? { driver.core.state(now: driver.instant, pid: 1).uplinks.first?.quality.degraded }
        driver.modems([modem(rsrp: -114)])
        #expect(degraded() == false)
        driver.modems([modem(rsrp: -115)])
        #expect(degraded() == true)
        driver.modems([modem(rsrp: -111)])
        #expect(degraded() == true)
        driver.modems([modem(rsrp: -110)])
        #expect(degraded() == false)
    }

    @Test func aDegradedCellularPrimaryHandsOverAsALossyOneDoes() {
        var driver = CoreDriver(CoreDriver.configuration {
            $0.agent.priority = [.interface("wwan0"), .kind(.ethernet)]
            $0.agent.avoidDegraded = .any
        })
        driver.modems([modem()])
        driver.links([wwan0, eth0])
        driver.answerAll()
        driver.advance(to: 120_000)
        #expect(driver.core.primary == "wwan0")
        driver.modems([modem(rsrp: -121)], at: 120_000)
        driver.advance(to: 170_000)
        #expect(driver.core.primary == "wwan0")
        driver.advance(to: 181_000)
        #expect(driver.core.primary == "eth0")
        #expect(driver.hooks.last { $0.kind == .primary }?.primaryReason == .degraded)
    }

    @Test func theLadderReconnectsThenResetsAndTellsTheHooks() {
        var driver = started {
            $0.probing.recoverAfterMilliseconds = 60_000
            $0.probing.resetAfter = .value(300_000)
            $0.probing.powerCycleAfter = .value(900_000)
        }
        driver.dead = ["wwan0"]
        driver.advance(to: 31_000)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
        let failedAt = 30_000
        driver.advance(to: 1_000_000)
        #expect(driver.recoveries.map(\.step) == [.reconnect, .reset])
        #expect(driver.recoveries.map(\.at) == [failedAt + 60_000, failedAt + 300_000])
        #expect(driver.recoveries.allSatisfy { $0.equipmentID == "861234567890128" })
        let recovers = driver.hooks.filter { $0.kind == .recover }
        #expect(recovers.map(\.recoveryStep) == [.reconnect, .reset, .powerCycle])
        #expect(recovers.last?.environment.contains("UPLINK_RECOVERY_STEP=power-cycle") == true)
        #expect(recovers.last?.environment.contains("UPLINK_MODEM_RECOVERIES_TOTAL=3") == true)
        #expect(recovers.last?.interface == "wwan0")
        let status = driver.core.state(now: driver.instant, pid: 1).uplinks.first?.modem
        #expect(status?.recoveryStep == .powerCycle)
        #expect(status?.recoveriesTotal == 3)
    }

    /// A driver whose wwan0 passes nothing from 30 s on: the reconnect falls due at
    /// 90 s, and the reset (when `reset` is true) at 150 s.
    private func failing(reset: Bool) -> CoreDriver {
        var driver = started {
            $0.probing.recoverAfterMilliseconds = 60_000
            $0.probing.resetAfter = reset ? .value(120_000) : .off
        }
        driver.dead = ["wwan0"]
        return driver
    }

    private func verdictHooks(_ driver: CoreDriver, after count: Int) -> [HookEvent] {
        driver.hooks.dropFirst(count).filter { $0.kind == .verdict }
    }

    @Test func aResetsWayBackIsTheStepsDoingAndItsReturnStartsAFullRound() {
        var driver = failing(reset: true)
        driver.advance(to: 160_000)
        #expect(driver.recoveries.map(\.step) == [.reconnect, .reset])
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
        let hooksBefore = driver.hooks.count
        // Gone while it re-enumerates, then new as ModemManager always shows a modem:
        // disabled, then enabled and searching, then registered without a bearer.
        driver.modems([], at: 160_500)
        driver.modems([modem(.disabled, registration: nil, bearerConnected: false)], at: 161_000)
        driver.modems([modem(.searching, registration: .searching, bearerConnected: false)], at: 161_500)
        driver.modems([modem(.registered, bearerConnected: false)], at: 162_000)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
        #expect(verdictHooks(driver, after: hooksBefore).isEmpty)
        // Connected again: a full round at once says whether data flows, and decides
        // alone as after a link that came back.
        driver.dead = []
        let rounds = driver.plans(of: "wwan0").count
        driver.modems([modem()], at: 163_000)
        #expect(driver.plans(of: "wwan0").count == rounds + 1)
        #expect(driver.plans(of: "wwan0").last?.purpose == .full)
        driver.answerAll()
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .online)
        #expect(verdictHooks(driver, after: hooksBefore).map(\.verdict) == [.online])
    }

    @Test func aStepUnansweredByItsDeadlineLetsTheModemsWordCountAgain() {
        var driver = failing(reset: false)
        driver.advance(to: 90_000)
        #expect(driver.recoveries.map(\.step) == [.reconnect])
        driver.modems([modem(.registered, bearerConnected: false)], at: 91_000)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
        // The reconnect is awaited 90 s.
        driver.advance(to: 179_999)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
        driver.advance(to: 180_000)
        #expect(driver.core.verdict(of: "wwan0") == Assessment(.down, reason: .bearerDisconnected))
    }

    /// ModemManager's first word after the agent's Disconnect may still show the old
    /// bearer connected (the modem is "disconnecting"): that is not the step answered,
    /// and the disconnected bearer that follows is still the step's own doing.
    @Test func theOldBearerStillConnectedRightAfterTheStepDoesNotAnswerIt() {
        var driver = failing(reset: false)
        driver.advance(to: 90_000)
        #expect(driver.recoveries.map(\.step) == [.reconnect])
        let hooksBefore = driver.hooks.count
        let rounds = driver.plans(of: "wwan0").count
        driver.modems([modem(.disconnecting)], at: 90_100)
        #expect(driver.plans(of: "wwan0").count == rounds)
        driver.modems([modem(.registered, bearerConnected: false)], at: 91_000)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
        #expect(verdictHooks(driver, after: hooksBefore).isEmpty)
        driver.dead = []
        driver.modems([modem()], at: 92_000)
        #expect(driver.plans(of: "wwan0").last?.purpose == .full)
        driver.answerAll()
        #expect(verdictHooks(driver, after: hooksBefore).map(\.verdict) == [.online])
    }

    @Test func aFaultTheStepDidNotCauseIsNewsEvenWhileItIsAwaited() {
        var driver = failing(reset: false)
        driver.advance(to: 90_000)
        #expect(driver.recoveries.map(\.step) == [.reconnect])
        driver.modems([modem(.locked, registration: nil)], at: 91_000)
        #expect(driver.core.verdict(of: "wwan0") == Assessment(.down, reason: .simLocked))
    }

    @Test func aRoundThatSawThePathBeforeTheStepDecidesNothing() {
        var driver = failing(reset: false)
        driver.advance(to: 89_000)
        driver.links([wwan0], events: [.carrierChanged(usableLink("wwan0", index: 4))], at: 89_000)
        #expect(driver.inFlightRounds.map(\.interface) == ["wwan0"])
        driver.tick(at: 90_000)
        #expect(driver.recoveries.map(\.step) == [.reconnect])
        // The upstream answers again, but this round began before the reconnect.
        driver.finish("wwan0", Assessment(.online, reason: .validated), at: 91_000)
        #expect(driver.core.verdict(of: "wwan0")?.verdict == .limited)
    }

    @Test func noStepWhileTheModemIsNotRegisteredOrRecoverIsOff() {
        var driver = started { $0.probing.recoverAfterMilliseconds = 60_000 }
        driver.modems([modem(.searching, registration: .searching)], at: 1_000)
        driver.advance(to: 3_600_000)
        #expect(driver.recoveries.isEmpty)
        driver = started {
            $0.probing.recoverAfterMilliseconds = 60_000
            $0.kinds[.wwan] = { var layer = ProbingOverrides(); layer.recover = false; return layer }()
        }
        driver.dead = ["wwan0"]
        driver.advance(to: 3_600_000)
        #expect(driver.recoveries.isEmpty)
    }
}

@Suite("Modems: where their figures show")
struct ModemFiguresTests {
    private func status(_ step: RecoveryStep? = .reconnect) -> ModemStatus {
        var facts = modem()
        facts.operatorName = "Uplink Test 4G"
        facts.signal.sinrDB = 12.4
        return ModemStatus(facts, recoveryStep: step, recoveriesTotal: 1)
    }

    @Test func theStateFileCarriesTheModemInAppendedColumns() throws {
        var uplink = UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .online, reason: .validated, sinceWallSeconds: 100)
        uplink.modem = status()
        let state = AgentState(primary: "wwan0", uplinks: [uplink], writtenWallSeconds: 300, pid: 1)
        let text = StateFileFormat.encode(state, format: 1)
        #expect(text.contains(" - - 861234567890128 connected home Uplink%20Test%204G 00101 lte -95 -10 12.4 64 reconnect 1 - - - - - - no - hot\n"))
        let read = try StateFileFormat.decode(text)
        #expect(read.uplinks.first?.modem == uplink.modem)
        // Format 2 names each of them.
        let named = StateFileFormat.encode(state)
        #expect(named.contains("\nuplink wwan0 modem_operator Uplink%20Test%204G\nuplink wwan0 modem_operator_code 00101\n"))
        #expect(named.contains("\nuplink wwan0 modem_rsrp_dbm -95\n") && named.contains("\nuplink wwan0 modem_sinr_db 12.4\n"))
        #expect(try StateFileFormat.decode(named).uplinks.first?.modem == uplink.modem)
        // A reader of an older file, or of an uplink without a modem, gets none.
        let older = text.split(separator: "\n").map { line in
            line.hasPrefix("uplink ") ? line.split(separator: " ").prefix(24).joined(separator: " ") : String(line)
        }.joined(separator: "\n")
        #expect(try StateFileFormat.decode(older).uplinks.first?.modem == nil)
    }

    @Test func statusJSONAndHooksNameEveryFigure() {
        let json = status().json.serialized()
        #expect(json == #"{"equipment_id":"861234567890128","state":"connected","registration":"home","operator":"Uplink Test 4G","operator_code":"00101","access_technology":"lte","rsrp_dbm":-95,"rsrq_db":-10,"sinr_db":12.4,"rssi_dbm":null,"signal_quality_pct":64,"recovery_step":"reconnect","recoveries_total":1}"#)
        var uplink = UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .online, reason: .validated, sinceWallSeconds: 100)
        uplink.modem = status()
        var event = HookEvent(kind: .verdict, interface: "wwan0", interfaceKind: .wwan, verdict: .online, previousVerdict: .down,
                              reason: .validated, portalURL: nil, primary: "wwan0", previousPrimary: nil, wallSeconds: 100)
        event.uplink = uplink
        let environment = event.environment
        for line in ["UPLINK_MODEM_EQUIPMENT_ID=861234567890128", "UPLINK_MODEM_STATE=connected", "UPLINK_MODEM_REGISTRATION=home",
                     "UPLINK_MODEM_OPERATOR=Uplink Test 4G", "UPLINK_MODEM_ACCESS_TECHNOLOGY=lte", "UPLINK_MODEM_RSRP_DBM=-95",
                     "UPLINK_MODEM_SINR_DB=12.4", "UPLINK_MODEM_SIGNAL_QUALITY_PCT=64", "UPLINK_MODEM_RECOVERY_STEP=reconnect",
                     "UPLINK_MODEM_RECOVERIES_TOTAL=1"] {
            #expect(environment.contains(line), "\(line)")
        }
        #expect(status(nil).summary == "modem connected home, Uplink Test 4G, lte, RSRP -95 dBm")
    }

    @Test func theTextfileHasTheModemSeries() {
        var uplink = UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .online, reason: .validated, sinceWallSeconds: 100)
        uplink.modem = status()
        let text = PrometheusText.format(AgentState(primary: "wwan0", uplinks: [uplink], writtenWallSeconds: 300, pid: 1),
                                         counters: MetricCounters())
        #expect(text.contains(#"uplinkd_modem_rsrp_dbm{interface="wwan0",kind="wwan",equipment_id="861234567890128"} -95"#))
        #expect(text.contains(#"uplinkd_modem_registered{interface="wwan0",kind="wwan",equipment_id="861234567890128"} 1"#))
        #expect(text.contains(#"uplinkd_modem_recoveries_total{interface="wwan0",kind="wwan",equipment_id="861234567890128"} 1"#))
        #expect(text.contains(#"uplinkd_modem_signal_quality_ratio{interface="wwan0",kind="wwan",equipment_id="861234567890128"} 0.64"#))
    }

    @Test func theKeysParseAndBadLadderOrBindingIsRefused() throws {
        let configuration = try parse("""
            [agent]
            degraded-rsrp = -110dBm
            modem-signal-interval = 1m
            modemmanager = no
            recover-after = 3m
            [kind wwan]
            reset-after = off
            power-cycle-after = 1h
            [interface wwan0]
            modem = 861234567890128
            [interface usb0]
            modem = none
            recover = no
            """)
        #expect(configuration.agent.quality.rsrpDBm == -110)
        #expect(configuration.agent.modems.signalIntervalMilliseconds == 60_000)
        #expect(configuration.agent.modems.use == .never)
        #expect(configuration.interfaces["wwan0"]?.modem == .equipment("861234567890128"))
        #expect(configuration.interfaces["usb0"]?.modem == .noModem)
        let wwan = configuration.probingSettings(for: "wwan0", kind: .wwan, metered: true).recovery
        #expect(wwan.recoverAfterMilliseconds == 180_000 && wwan.resetAfterMilliseconds == nil)
        #expect(wwan.powerCycleAfterMilliseconds == 3_600_000 && wwan.enabled)
        #expect(!configuration.probingSettings(for: "usb0", kind: .wwan, metered: true).recovery.enabled)
        expectError("[agent]\nrecover-after = 10m\n", line: nil, key: "reset-after", mentioning: "longer than recover-after")
        expectError("[interface wwan0]\nreset-after = 5m\npower-cycle-after = 4m\n", line: 3, key: "power-cycle-after")
        expectError("[interface wwan0]\nmodem = 8612 3456\n", line: 2, key: "modem", mentioning: "equipment identifier")
        expectError("[agent]\ndegraded-rsrp = -20\n", line: 2, key: "degraded-rsrp")
    }

    @Test func modemManagersObjectsReadAsModems() {
        let root = "/org/freedesktop/ModemManager1"
        func dict(_ pairs: [(String, DBusValue)]) -> DBusValue {
            .dictionary(pairs.map { (key: DBusValue.string($0.0), value: DBusValue.variant($0.1)) })
        }
        var objects = ModemManagerObjects()
        objects.replaceAll(.dictionary([(key: .objectPath("\(root)/Modem/3"), value: .dictionary([
            (key: .string(ModemManagerObjects.modemInterface), value: dict([
                ("EquipmentIdentifier", .string("861234567890128")), ("State", .int32(8)), ("StateFailedReason", .uint32(0)),
                ("AccessTechnologies", .uint32(1 << 14)), ("SignalQuality", .structure([.uint32(71), .bool(true)])),
                ("Bearers", .array([.objectPath("\(root)/Bearer/1")])),
                ("Ports", .array([.structure([.string("ttyUSB2"), .uint32(3)]), .structure([.string("wwan0"), .uint32(2)])])),
            ])),
            (key: .string(ModemManagerObjects.threeGPPInterface), value: dict([
                ("RegistrationState", .uint32(5)), ("OperatorName", .string("Roam")), ("OperatorCode", .string("26201")),
            ])),
            (key: .string(ModemManagerObjects.signalInterface), value: dict([
                ("Rate", .uint32(30)), ("Lte", .dictionary([(key: .string("rsrp"), value: .variant(.double(-101.5)))])),
            ])),
        ]))]))
        var facts = objects.modems.first
        #expect(facts?.equipmentID == "861234567890128")
        #expect(facts?.state == .registered && facts?.registration == .roaming)
        #expect(facts?.signalQualityPercent == 71 && facts?.signal.rsrpDBm == -101.5)
        #expect(facts?.ports == ["ttyUSB2", "wwan0"] && facts?.accessTechnologies.names == "lte")
        // Bearers are not ObjectManager's: read on their own, then followed.
        #expect(facts?.bearers == [BearerFacts(path: "\(root)/Bearer/1", connected: false)])
        objects.interfacesAdded(path: "\(root)/Bearer/1", .dictionary([(key: .string(ModemManagerObjects.bearerInterface),
            value: dict([("Connected", .bool(false)), ("Interface", .string(""))]))]))
        objects.propertiesChanged(path: "\(root)/Bearer/1", interface: ModemManagerObjects.bearerInterface,
                                  changed: dict([("Connected", .bool(true)), ("Interface", .string("wwan0"))]), invalidated: [])
        facts = objects.modems.first
        #expect(facts?.dataInterfaces == ["wwan0"])
        objects.interfacesRemoved(path: "\(root)/Modem/3", [ModemManagerObjects.modemInterface])
        #expect(objects.modems.isEmpty)
        // Objects outside ModemManager's root are not taken.
        objects.interfacesAdded(path: "/elsewhere/Modem/0", .dictionary([(key: .string(ModemManagerObjects.modemInterface),
                                                                          value: dict([("EquipmentIdentifier", .string("1"))]))]))
        #expect(objects.modemPaths.isEmpty)
    }
}
