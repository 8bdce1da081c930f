import Testing
import UplinkCore
import UplinkTestSupport

/// Values that parse but could never work are refused with file, line and key, and
/// what quotes the file is escaped.
@Suite("Impossible values and escaped keys")
struct ImpossibleValuesTests {
    @Test(arguments: ["224.0.0.1", "255.255.255.255", "ff02::1", "0.0.0.0", "::"])
    func aDNSServerMustBeOneHost(address: String) {
        expectError("[interface eth0]\ndns = \(address)\n", line: 2, key: "dns", mentioning: "not one host")
        expectError("[dns]\nknown-answer = known.example \(address)\n", line: 2, key: "known-answer", mentioning: "not one host")
    }

    @Test(arguments: ["http://0/", "http://127.1/", "http://0x7f.1/", "http://999.999.999.999/", "http://10.0.0.256/",
                      "http://example.0x10/"])
    func aNumberLikeHostThatIsNoAddressIsRefused(url: String) {
        #expect(throws: ProbeURLError.self) { try ProbeURL(parsing: url) }
        expectError("[probe p]\nurl = \(url)\n", line: 2, key: "url", mentioning: "not an IPv4 address")
    }

    @Test(arguments: ["http://0.0.0.0/", "http://[::]/", "http://224.0.0.1/", "http://255.255.255.255/"])
    func aProbeHostThatCannotAnswerIsRefused(url: String) {
        expectError("[probe p]\nurl = \(url)\n", line: 2, key: "url", mentioning: "not one host")
    }

    @Test(arguments: ["http://203.0.113.80/", "http://probe.example/", "http://[2001:db8::1]/", "http://v4.example2/",
                      "http://1x.example/"])
    func ordinaryHostsStillParse(url: String) throws {
        _ = try ProbeURL(parsing: url)
    }

    @Test func aStateFilePathEndingInASlashIsRefused() {
        expectError("[agent]\nstate-file = /run/uplinkd/\n", line: 2, key: "state-file", mentioning: "not a directory")
    }

    @Test func aKeyWithControlBytesIsQuotedEscaped() {
        let error = parseError("[agent]\nin\u{1b}[2Jterval\u{0}x = 5s\n")
        let text = error.map(String.init(describing:)) ?? ""
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "\(text)")
        #expect(text.contains("\\u{1b}"), "\(text)")
        #expect(text.contains("\\u{0}x"), "\(text)")
    }
}
