import CUplinkShim
import Glibc

/// Delivers signals (TERM, INT, HUP, ...) to the event loop through a signalfd, so a
/// signal is just another readable descriptor and no handler runs at a random moment.
public final class SignalSource {
    private let loop: EventLoop
    private let descriptor: Int32

    /// Blocks `signals` for the process and calls `handler` on the loop for each.
    public init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        guard sigprocmask(SIG_BLOCK, &set, nil) == 0 else { throw SystemError("sigprocmask") }
        let descriptor = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard descriptor >= 0 else { throw SystemError("signalfd") }
        self.loop = loop
        self.descriptor = descriptor
        try loop.watch(descriptor, for: .readable) { _ in
            var info = signalfd_siginfo()
            while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                handler(Int32(info.ssi_signo))
            }
        }
    }

    deinit {
        loop.unwatch(descriptor)
        close(descriptor)
    }
}
