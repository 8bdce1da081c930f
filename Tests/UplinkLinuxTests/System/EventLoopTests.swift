import Glibc
import Testing
@testable import UplinkLinux

/// The loop's descriptor bookkeeping against the kernel's epoll set.
@Suite struct EventLoopTests {
    /// A descriptor closed while watched leaves the epoll set with its close, but not
    /// the loop's table; when a new descriptor gets its number (sd-bus reconnecting
    /// after the system bus restarted), watching it must add it, not fail with ENOENT.
    /// `dup2` gives the number to the new pipe without freeing it in between (tests
    /// run in parallel and open descriptors of their own).
    @Test func aReusedDescriptorNumberIsWatchedAfresh() throws {
        let loop = try EventLoop()
        var first: [Int32] = [0, 0], second: [Int32] = [0, 0]
        try #require(pipe(&first) == 0 && pipe(&second) == 0)
        let reused = first[0]
        defer { close(reused); close(second[1]) }
        try loop.watch(reused, for: .readable) { _ in }
        close(first[1])
        // The first pipe's read end is closed (and leaves the epoll set); its number
        // now holds the second pipe's.
        try #require(dup2(second[0], reused) == reused)
        close(second[0])
        var heard = false
        try loop.watch(reused, for: .readable) { _ in
            heard = true
            loop.stop()
        }
        var byte: UInt8 = 1
        #expect(write(second[1], &byte, 1) == 1)
        loop.schedule(afterMilliseconds: 5_000) { loop.stop() }
        try loop.run()
        #expect(heard)
    }
}
