import UplinkCore

/// ModemManager's modems, followed live: ModemManager over D-Bus, or a fake in tests.
/// Everything runs on the loop.
package protocol ModemSource: AnyObject {
    /// Called with every modem after each change; empty while ModemManager is not on
    /// the bus.
    var onChange: (([ModemFacts]) -> Void)? { get set }
    /// Connects to the bus and follows ModemManager from now on (attaching again when
    /// it starts or restarts later); modems refresh their signal figures at `signalIntervalMilliseconds`.
    func start(signalIntervalMilliseconds: Int)
    /// Disconnects the modem's data bearer, then connects it again with the bearer's
    /// own properties (the APN included).
    func reconnect(_ equipmentID: String)
    /// Resets the modem; when it is back (a new object), connects it again as it was.
    func reset(_ equipmentID: String)
    /// Disconnects the modem's data bearer, or connects it again with the properties it
    /// had (a cold backup's `standby-bearer = disconnected`).
    func setBearer(_ equipmentID: String, connected: Bool)
}
