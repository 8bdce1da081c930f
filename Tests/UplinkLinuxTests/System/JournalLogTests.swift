import Glibc
import Testing
@testable import UplinkLinux

/// Log lines carry sd-daemon priorities only when stderr is the journal's stream.
@Suite("Log: journald priorities")
struct JournalLogTests {
    private func stream() throws -> (descriptor: Int32, value: String) {
        var template = Array("/tmp/uplinkd-journal-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(descriptor >= 0)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        var status = stat()
        try #require(fstat(descriptor, &status) == 0)
        return (descriptor, "\(status.st_dev):\(status.st_ino)")
    }

    @Test func theStreamSystemdNamesIsTheJournal() throws {
        let (descriptor, value) = try stream()
        defer { close(descriptor) }
        #expect(Log.isJournal(value, descriptor: descriptor))
    }

    @Test func anotherStreamOrNoVariableIsNot() throws {
        let (descriptor, value) = try stream()
        let (other, _) = try stream()
        defer { close(descriptor); close(other) }
        // A child that redirected stderr inherits the variable, not the stream.
        #expect(!Log.isJournal(value, descriptor: other))
        #expect(!Log.isJournal(nil, descriptor: descriptor))
        #expect(!Log.isJournal("garbage", descriptor: descriptor))
        #expect(!Log.isJournal("1:2:3", descriptor: descriptor))
    }

    @Test func prioritiesAreSyslogs() {
        #expect([Log.Level.error, .warning, .notice, .info, .debug].map(\.syslogPriority) == [3, 4, 5, 6, 7])
    }
}
