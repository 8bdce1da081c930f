import Glibc
import Testing
import UplinkCore
import UplinkLinux

/// The data plans' adapters: the plan file, the reset requests beside it, the link
/// counters from rtnetlink (the system's local time is tested end to end in
/// test_plans.py: TZ set in a test process races with the other tests' threads).
@Suite("Data plans: the adapters")
struct PlanStoreTests {
    private static let ledger = PlanLedger(
        cycleStartWallSeconds: 1_800_000_000, used: ByteCounts(received: 1_234, transmitted: 56), marksTold: [75],
        account: TrafficAccount(baseline: CounterReading(device: DeviceIdentity(bootID: "0b1f-22", index: 7), receivedBytes: 9,
                                                         transmittedBytes: 8, receivedPackets: 2, transmittedPackets: 1,
                                                         headerBytes: 14)))

    @Test func plansAreWrittenAndReadBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = "\(directory.path)/state/plans"
        let store = PlanStore(path: path)
        #expect(store.load().isEmpty)
        // Nothing to keep, nothing written.
        store.save([:], wallSeconds: 1)
        #expect(!SmallFile.exists(path))
        store.save(["wwan0": Self.ledger], wallSeconds: 1_800_000_100)
        #expect(PlanStore(path: path).load() == ["wwan0": Self.ledger])
        // Once written, an empty set is written too (the last plan went away).
        store.save([:], wallSeconds: 1_800_000_200)
        #expect(PlanStore(path: path).load().isEmpty)
    }

    @Test func aBrokenFileIsSetAsideAndCountingStartsAgain() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("plans", "format 1\nplan wwan0 not-a-time 1 2 - - - - - - - -\n")
        #expect(PlanStore(path: "\(directory.path)/plans").load().isEmpty)
        #expect(SmallFile.exists("\(directory.path)/plans.bad"))
        #expect(!SmallFile.exists("\(directory.path)/plans"))
    }

    @Test func aFileTooLargeToReadIsSetAsideBesideAnEarlierOneAndNeverOverwritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("plans.bad", "an earlier broken file\n")
        try directory.write("plans", "format 1\n" + String(repeating: "# padding\n", count: 120_000))
        let store = PlanStore(path: "\(directory.path)/plans")
        #expect(store.load().isEmpty)
        #expect(SmallFile.read("\(directory.path)/plans.bad", limit: 100) == "an earlier broken file\n")
        #expect((SmallFile.read("\(directory.path)/plans.bad.1", limit: 2 << 20)?.count ?? 0) > 1 << 20)
        // Counting starts afresh in a new file.
        store.save(["wwan0": Self.ledger], wallSeconds: 1_800_000_100)
        #expect(PlanStore(path: "\(directory.path)/plans").load() == ["wwan0": Self.ledger])
    }

    /// `plan --reset` signals the pid a state file names only when that pid is an
    /// uplinkd: this test process is one by name (uplinkdPackageTests), pid 1 is not.
    @Test func onlyAnUplinkdProcessCountsAsTheRunningAgent() {
        #expect(ProcessTable.isUplinkd(Int(getpid())))
        #expect(ProcessTable.exists(1) && !ProcessTable.isUplinkd(1))
        #expect(!ProcessTable.isUplinkd(0) && !ProcessTable.isUplinkd(Int(Int32.max)))
    }

    @Test func resetRequestsAreTakenOnceEach() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = PlanStore(path: "\(directory.path)/plans")
        #expect(store.takeRequests().isEmpty)
        try PlanStore.request(reset: "wwan0", at: store.requestPath)
        try PlanStore.request(reset: "wwan1", at: store.requestPath)
        #expect(store.takeRequests() == ["wwan0", "wwan1"])
        #expect(store.takeRequests().isEmpty)
        #expect(!SmallFile.exists(store.requestPath))
    }

    @Test func theKernelsCountersOfLoopbackAreRead() throws {
        let loop = try EventLoop()
        let counters = try NetlinkLinkCounters(loop: loop)
        let first = try #require(counters.readings(of: ["lo"])["lo"])
        #expect(first.device.index == 1 && first.headerBytes == 0)
        #expect(first.device.bootID != "unknown")
        // Loopback is not Ethernet-framed; its counters only grow.
        let second = try #require(counters.readings(of: ["lo", "no-such-link"])["lo"])
        #expect(second.receivedBytes >= first.receivedBytes && second.device == first.device)
        #expect(counters.readings(of: ["no-such-link"]).isEmpty)
    }
}
