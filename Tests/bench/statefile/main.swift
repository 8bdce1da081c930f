// The state file's cost per change, in both formats: the bytes of a gateway's file
// (three uplinks, a modem, a data plan) and the time to encode it and to replace the
// file as the agent's StateWriter does (write a temporary file, fsync, rename, fsync
// the directory). Built by bench_state_file.sh against the core's sources.
import Glibc
import UplinkCore

let eth0 = InterfaceName("eth0")!, wlan0 = InterfaceName("wlan0")!, wwan0 = InterfaceName("wwan0")!

func gateway(change: Int) -> AgentState {
    var modem = ModemFacts(equipmentID: "861234567890128", state: .connected, registration: .home,
                           operatorName: "Vodafone DE", operatorCode: "26202",
                           accessTechnologies: AccessTechnologies(names: "lte"), signalQualityPercent: 64)
    modem.signal = SignalFigures(rsrpDBm: -98.5, rsrqDB: -11, sinrDB: 12.4)
    let quality = UplinkQualityStatus(figures: QualityFigures(roundTripMilliseconds: 12 + change % 7,
                                                             roundTripVariationMilliseconds: 3, lossPercent: 0))
    var state = AgentState(primary: eth0, uplinks: [
        UplinkStatus(interface: eth0, kind: .ethernet, verdict: .online, reason: .validated, sinceWallSeconds: 1_795_269_709,
                     ipv4: .online, ipv6: .limited, bytesToday: 1_182 + change, ipv4Reason: .validated, ipv6Reason: .timeout,
                     dnsSource: .dhclient, quality: quality),
        UplinkStatus(interface: wlan0, kind: .wifi, verdict: .online, reason: .validated, sinceWallSeconds: 1_795_269_706,
                     ipv4: .online, bytesToday: 2_602, ipv4Reason: .validated, dnsSource: .dhclient,
                     quality: UplinkQualityStatus(figures: QualityFigures(roundTripMilliseconds: 31,
                                                                          roundTripVariationMilliseconds: 9))),
        UplinkStatus(interface: wwan0, kind: .wwan, verdict: .online, reason: .validated, sinceWallSeconds: 1_795_269_706,
                     ipv4: .online, bytesToday: 2_389, ipv4Reason: .validated, dnsSource: .configured, metered: true,
                     quality: UplinkQualityStatus(figures: QualityFigures(roundTripMilliseconds: 84,
                                                                          roundTripVariationMilliseconds: 20)),
                     modem: ModemStatus(modem),
                     plan: PlanStatus(received: 600_000_000, sent: 134_003_200, limitBytes: 1_000_000_000,
                                      cycleStartWallSeconds: 1_793_491_200, cycleEndWallSeconds: 1_796_083_200),
                     standby: .warm),
    ], writtenWallSeconds: 1_795_269_711 + change, pid: 30_655, familyPrimaries: [.ipv4: eth0, .ipv6: wlan0])
    state.decision = 7
    state.hooksDone = 7
    return state
}

func nowNanoseconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return spec.tv_sec * 1_000_000_000 + spec.tv_nsec
}

/// What AtomicFile.replace does, call for call.
func replace(_ path: String, directory: Int32, with text: String) {
    let temporary = path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(fd >= 0, "open \(temporary): errno \(errno)")
    var bytes = Array(text.utf8)
    precondition(write(fd, &bytes, bytes.count) == bytes.count)
    precondition(fsync(fd) == 0 && close(fd) == 0)
    precondition(rename(temporary, path) == 0)
    precondition(fsync(directory) == 0)
}

func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }

let arguments = CommandLine.arguments
guard arguments.count == 3, let changes = Int(arguments[2]), changes > 0 else {
    fputs("usage: statefile-bench DIRECTORY CHANGES\n", stderr)
    exit(64)
}
let directoryPath = arguments[1]
let directory = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
precondition(directory >= 0, "open \(directoryPath): errno \(errno)")
/// Medians of `changes` changes written in `format`: (bytes, encode ns, encode and replace ns).
func measure(format: Int, changes: Int) -> (bytes: Int, encode: Int, total: Int) {
    let path = "\(directoryPath)/state\(format)"
    var encode: [Int] = []
    var total: [Int] = []
    var bytes = 0
    for change in 0..<changes {
        let state = gateway(change: change)
        let start = nowNanoseconds()
        let text = StateFileFormat.encode(state, format: format)
        let encoded = nowNanoseconds()
        replace(path, directory: directory, with: text)
        let done = nowNanoseconds()
        encode.append(encoded - start)
        total.append(done - start)
        bytes = text.utf8.count
        // Format 1 has no decision numbers.
        var expected = state
        if format == 1 { (expected.decision, expected.hooksDone) = (0, 0) }
        guard (try? StateFileFormat.decode(text)) == expected else {
            fputs("format \(format) does not read back as it was written:\n\(text)", stderr)
            exit(1)
        }
    }
    return (bytes, median(encode), median(total))
}

// A first pass of each warms the caches and the allocator; the second is printed.
_ = (measure(format: 1, changes: min(changes, 200)), measure(format: 2, changes: min(changes, 200)))
for format in [1, 2] {
    let figures = measure(format: format, changes: changes)
    let lines = StateFileFormat.encode(gateway(change: 0), format: format).split(separator: "\n").count
    print("format \(format): \(figures.bytes) bytes, \(lines) lines; per change (median of \(changes)): "
        + "encode \(figures.encode / 1_000) us, encode and replace \(figures.total / 1_000) us")
}
print("files: \(directoryPath)/state1, \(directoryPath)/state2")
