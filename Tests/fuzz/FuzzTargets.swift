// libFuzzer targets for uplinkd's parsers of untrusted input: the configuration file,
// HTTP answers (status, Location, body: WISPr, meta refresh, body checks), DNS server
// and lease files, and the state file. Built by Tests/fuzz/build.sh with
// `-sanitize=fuzzer,address`; one binary, the target chosen by UPLINKD_FUZZ_TARGET.
//
// Each target feeds the bytes to the same public entry points the agent uses. Besides
// "no crash, no leak, no hang", two properties are checked where the code promises
// them: a state file that decodes re-encodes to a fixed point, and a portal URL never
// exceeds its documented bound.
import Glibc
import UplinkCore

enum FuzzTarget: String, CaseIterable {
    case config, http, dns, state
}

/// Chosen once, in LLVMFuzzerInitialize, before any input is run.
nonisolated(unsafe) private var target = FuzzTarget.config

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let name = getenv("UPLINKD_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let chosen = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        fputs("uplinkd-fuzz: set UPLINKD_FUZZ_TARGET to one of: \(names)\n", stderr)
        exit(2)
    }
    target = chosen
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    switch target {
    case .config: fuzzConfiguration(bytes)
    case .http: fuzzHTTPAnswer(bytes)
    case .dns: fuzzDNSFiles(bytes)
    case .state: fuzzStateFile(bytes)
    }
    return 0
}

/// As the loader does: only valid UTF-8 reaches the parser; a main file and a
/// drop-in split at the first form feed, so drop-in merging is exercised too.
func fuzzConfiguration(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    let parts = text.split(separator: "\u{0C}", maxSplits: 1, omittingEmptySubsequences: false)
    let sources = parts.enumerated().map { ConfigurationParser.Source(fileName: "f\($0.offset).conf", text: String($0.element)) }
    _ = try? ConfigurationParser(fileName: "f0.conf").parse(sources)
}

/// Probes with each kind of body check, so every validation path sees the body.
private let probes: [ProbeSpec] = {
    var list = DefaultProbes.all
    let parser = ConfigurationParser(fileName: "fuzz.conf")
    let text = """
    [check]
    default-probes = no
    [probe contains]
    url = http://192.0.2.1/hotspot-detect.html
    expect-contains = Success
    [probe equals]
    url = https://192.0.2.1/ok
    expect-body = OK
    [probe regex]
    url = http://192.0.2.1/r
    expect-regex = ^(\\w+\\s?)+$
    """
    if let configuration = try? parser.parse(text) { list += configuration.probes }
    return list
}()

/// Input: two bytes of status (mod 600), then a Location line, then the body.
func fuzzHTTPAnswer(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return }
    let status = (Int(bytes[0]) << 8 | Int(bytes[1])) % 600
    let rest = bytes.dropFirst(2)
    let newline = rest.firstIndex(of: 0x0A) ?? rest.endIndex
    let location = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
    let body = Array(rest[min(newline + 1, rest.endIndex)...].prefix(65_536))
    let response = ProbeResponse(status: status, location: location.isEmpty ? nil : location, body: body)
    for probe in probes {
        if case .portal(_, let url?) = Classifier.classify(.response(response), for: probe) {
            precondition(url.utf8.count <= 2_048, "portal URL longer than 2048 bytes: \(url.utf8.count)")
        }
    }
    let text = response.bodyText
    _ = PortalHints.wisprLoginURL(in: text)
    _ = PortalHints.metaRefreshURL(in: text)
    _ = PortalHints.looksLikeHTML(text)
    // The same body as a captive-portal API answer (application/captive+json).
    if let status = try? CaptivePortalAPI.status(from: body) {
        precondition(status.userPortalURL.map { $0.hasPrefix("https://") } ?? true, "a non-https user-portal-url kept")
    }
}

/// The same text through every DNS and lease file reader.
func fuzzDNSFiles(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = DNSFileParsers.networkdLinkState(text)
    _ = DNSFileParsers.resolvedLinkState(text)
    _ = DNSFileParsers.systemdLease(text)
    _ = DNSFileParsers.resolvConf(text)
    _ = DNSFileParsers.dhclientLeaseServers(text, interface: "eth0")
    _ = DhclientLeaseFile.lastLeases(text, interface: "wwan0")
    _ = MeteredLease.dhclient(text, interface: "eth0")
    _ = MeteredLease.networkd(text)
    _ = CaptivePortalAPI.dhclientURI(text, interface: "wlan0")
    _ = CaptivePortalAPI.networkdURI(text)
}

/// Whatever decodes must survive a round trip: encode(decode(encode(x))) == encode(x).
func fuzzStateFile(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let state = try? StateFileFormat.decode(text) else { return }
    let encoded = StateFileFormat.encode(state)
    guard let again = try? StateFileFormat.decode(encoded) else {
        preconditionFailure("a re-encoded state file does not decode:\n\(encoded)")
    }
    precondition(StateFileFormat.encode(again) == encoded, "the state file is not a fixed point:\n\(encoded)")
    _ = state.json.serialized()
}
