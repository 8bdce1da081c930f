import Glibc
import Testing
import UplinkCore
@testable import UplinkLinux

/// The MQTT credentials file is read only when no one but the agent's user can read
/// or change it, and the password never appears in an error.
@Suite("MQTT credentials file")
struct MQTTCredentialsFileTests {
    private func directory() throws -> String {
        var template = Array("/tmp/uplinkd-mqttcreds-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: try #require(made))
    }

    private func write(_ path: String, _ text: String, mode: mode_t) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        fchmod(fd, mode)
        close(fd)
    }

    private func refusal(_ path: String) -> String? {
        do {
            _ = try MQTTBridge.readCredentials(path)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func modeOwnerAndKindAreChecked() throws {
        let dir = try directory()
        let path = dir + "/mqtt.credentials"
        write(path, "username = gw\npassword = hunter2-secret\n", mode: 0o600)
        #expect(try MQTTBridge.readCredentials(path) == MQTTCredentials(username: "gw", password: "hunter2-secret"))

        write(path, "username = gw\npassword = hunter2-secret\n", mode: 0o640)
        let groupReadable = try #require(refusal(path))
        #expect(groupReadable.contains("mode 640") && !groupReadable.contains("hunter2"))

        write(path, "username = gw\npassword = hunter2-secret\n", mode: 0o600)
        if geteuid() == 0 {
            chown(path, 65_534, 65_534)
            let foreign = try #require(refusal(path))
            #expect(foreign.contains("owned by uid 65534") && !foreign.contains("hunter2"))
            chown(path, 0, 0)
        }

        let link = dir + "/link"
        symlink(path, link)
        #expect(refusal(link)?.contains("cannot open") == true)
        #expect(refusal(dir)?.contains("not a regular file") == true)

        write(path, "username = gw\nhunter2-secret\n", mode: 0o600)
        let malformed = try #require(refusal(path))
        #expect(malformed.contains(":2:") && !malformed.contains("hunter2"))
        for file in [path, link] { unlink(file) }
        rmdir(dir)
    }
}
