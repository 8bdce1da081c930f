import Glibc
import Testing
import UplinkCore
@testable import UplinkLinux

/// What `StateWriter.prepare` does before the first write.
@Suite("State writer: stale temporary files and impossible paths")
struct StateWriterTests {
    private func directory() throws -> String {
        var template = Array("/tmp/uplinkd-statewriter-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let pointer = try #require(made)
        return String(cString: pointer)
    }

    private func touch(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd >= 0 { close(fd) }
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// A process id that runs no process now: a child that has been reaped.
    private func deadPid() -> Int32 {
        let pid = fork()
        if pid == 0 { _exit(0) }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return pid
    }

    @Test func leftoversOfKilledAgentsAreRemovedAndLiveOnesKept() throws {
        let dir = try directory()
        let state = dir + "/state"
        let dead = "\(state).tmp.\(deadPid())"
        let live = "\(state).tmp.\(getppid())"
        let other = dir + "/other.tmp.\(deadPid())"
        for path in [dead, live, other] { touch(path) }
        try StateWriter(path: state) { 0 }.prepare()
        #expect(!exists(dead))
        #expect(exists(live))
        #expect(exists(other))
        for path in [live, other] { unlink(path) }
        rmdir(dir)
    }

    @Test func aPathThatIsADirectoryIsRefused() throws {
        let dir = try directory()
        #expect(throws: SystemError.self) { try StateWriter(path: dir) { 0 }.prepare() }
        rmdir(dir)
    }

    @Test func aMissingDirectoryIsNoError() throws {
        try StateWriter(path: "/tmp/uplinkd-statewriter-missing-\(getpid())/state") { 0 }.prepare()
    }
}
