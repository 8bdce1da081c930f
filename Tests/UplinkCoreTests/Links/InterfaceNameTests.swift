import Testing
import UplinkCore
import UplinkTestSupport

@Suite("InterfaceName")
struct InterfaceNameTests {
    @Test(arguments: ["eth0", "wlan0", "wwan0", "e", "enp0s31f6", "wlx00c0ca123456", "abcdefghijklmno", "br-lan", "eth0.100", "...", "a_b"])
    func validNames(name: String) throws {
        let parsed = try #require(InterfaceName(name))
        #expect(parsed.value == name)
        #expect(parsed.description == name)
        #expect(InterfaceName.problem(with: name) == nil)
    }

    @Test(arguments: ["", ".", "..", "abcdefghijklmnop", "eth0/1", "eth0:1", "eth 0", "eth\t0", "eth0\n", " eth0", "eth\u{7f}"])
    func invalidNames(name: String) {
        #expect(InterfaceName(name) == nil)
        #expect(InterfaceName.problem(with: name) != nil)
    }

    @Test func lengthIsCountedInBytes() {
        #expect(InterfaceName.maximumBytes == 15)
        #expect(InterfaceName(String(repeating: "a", count: 15)) != nil)
        #expect(InterfaceName(String(repeating: "a", count: 16)) == nil)
    }

    @Test func problemMessagesEscapeUntrustedInput() {
        let message = InterfaceName.problem(with: "a\u{1b}b")
        #expect(message?.contains("a\\u{1b}b") == true)
        #expect("tab\there".printableEscaped == "tab\\u{9}here")
    }
}
