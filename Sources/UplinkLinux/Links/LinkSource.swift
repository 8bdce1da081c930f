import UplinkCore

/// The kernel's interfaces, followed live. A source calls the handler it was made
/// with after each batch of changes.
package protocol LinkSource: AnyObject {
    var links: [Int: LinkFacts] { get }
    /// uplinkd's own rules and routes (those `settings` owns), from the same live view.
    func routingEntries(_ settings: RoutingSettings) -> (rules: [RoutingRule], routes: [OwnedRoute])
    /// `handler` runs on the loop after each batch that changed rules or routes.
    func watchRouting(_ handler: @escaping () -> Void)
    /// Takes in the notifications already queued, so the view is current (after a hook
    /// changed routes, before the agent looks at them).
    func catchUp()
    /// Deletes uplinkd's own rules and routes; returns what went.
    func removeRouting(_ settings: RoutingSettings) throws(NetlinkError) -> [String]
}

/// A source that knows nothing of rules (a test's fake links): no entries, nothing to do.
extension LinkSource {
    package func routingEntries(_ settings: RoutingSettings) -> (rules: [RoutingRule], routes: [OwnedRoute]) { ([], []) }
    package func watchRouting(_ handler: @escaping () -> Void) {}
    package func catchUp() {}
    package func removeRouting(_ settings: RoutingSettings) throws(NetlinkError) -> [String] { [] }
}

/// Receives each batch of link events, `resynced` true after an overflow re-dump, and
/// the state after the batch.
package typealias LinkHandler = (_ events: [LinkEvent], _ resynced: Bool, _ links: [Int: LinkFacts]) -> Void
