import CLinuxShim
import Glibc

/// Delivers signals (TERM, INT, HUP, ...) to the event loop through a signalfd, so a
/// signal is just another readable descriptor and no handler runs at a random moment.
package final class SignalSource {
    private let loop: EventLoop
    private let descriptor: FileDescriptor

    /// Blocks `signals` for the process and calls `handler` on the loop for each.
    package init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        try Syscall.call("sigprocmask") { sigprocmask(SIG_BLOCK, &set, nil) }
        let descriptor = FileDescriptor(owning: try Syscall.call("signalfd") {
            signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        })
        self.loop = loop
        self.descriptor = descriptor
        try loop.watch(descriptor.rawValue, for: .readable) { _ in
            var info = signalfd_siginfo()
            let size = MemoryLayout<signalfd_siginfo>.size
            while read(descriptor.rawValue, &info, size) == size {
                handler(Int32(info.ssi_signo))
            }
        }
    }

    deinit {
        loop.unwatch(descriptor.rawValue)
    }
}
