import UplinkCore

/// One look at ModemManager's modems for a one-shot command (`check`, `links`): the
/// client's first report, or none when ModemManager does not answer in time.
package enum ModemSnapshot {
    /// Calls `completion` once, on `loop`, with the modems (empty when ModemManager is
    /// not on the bus or does not answer within `timeoutMilliseconds`); the client has
    /// left the bus by then, so the loop can run dry.
    package static func take(loop: EventLoop, timeoutMilliseconds: Int = 2_000, completion: @escaping ([ModemFacts]) -> Void) {
        let client = ModemManagerClient(loop: loop)
        var done = false
        var timer: EventLoop.TimerID?
        let finish = { (modems: [ModemFacts]) in
            guard !done else { return }
            done = true
            if let timer { loop.cancel(timer) }
            // Not from inside sd-bus's own processing.
            loop.schedule(afterMilliseconds: 0) { client.stop() }
            completion(modems)
        }
        client.onChange = finish
        timer = loop.schedule(afterMilliseconds: timeoutMilliseconds) {
            Log.info("modems: ModemManager did not answer within \(timeoutMilliseconds) ms; going on without it")
            finish([])
        }
        client.start(signalIntervalMilliseconds: 0)
    }
}
