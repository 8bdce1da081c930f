import Testing
@testable import UplinkLinux

/// libmosquitto's codes as the log shows them.
@Suite struct MQTTErrorTests {
    /// A lost keep-alive (code 19) read "Unknown error." with Debian 12's library.
    @Test func everyNamedCodeHasASentence() {
        let lost = MQTTError(19, "connection to the broker")
        #expect(lost.code == .keepAlive)
        #expect(lost.description == "connection to the broker: no answer to the keep-alive (the broker, or the path to it, is gone) (mosquitto code 19)")
        for raw in Int32(-1)...Int32(30) {
            let error = MQTTError(raw, "doing it")
            guard ![.other, .systemError, .unknown].contains(error.code) else { continue }
            #expect(!error.message.contains("Unknown error"), "code \(raw): \(error.message)")
        }
    }
}
