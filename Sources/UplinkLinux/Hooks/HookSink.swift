import UplinkCore

/// Where hook events go: the hook runner, or a recorder in tests.
package protocol HookSink: AnyObject {
    /// Called on the loop when every hook of an event has run.
    var onEventFinished: ((HookEvent) -> Void)? { get set }
    func enqueue(_ event: HookEvent)
    /// Events queued or running: how far the hooks are behind.
    var pendingEvents: Int { get }
    /// The highest decision whose hooks, and every earlier one's, have run, when
    /// `latest` is the latest decision made (`HookQueue.caughtUp`).
    func caughtUp(latest: Int) -> Int
    /// Drops queued events, lets a running hook finish, runs the hooks for
    /// `finalEvent` (the stop event), then calls `completion`.
    func drain(finalEvent: HookEvent?, then completion: @escaping () -> Void)
    func reconfigure(directories: HookDirectories, timeoutMilliseconds: Int)
}
