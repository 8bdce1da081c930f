import CNetlink
import Glibc
import UplinkCore

/// Follows every interface live through libnl's cache manager (route/link, route/addr,
/// route/route, and route/rule for uplinkd's own rules), driven by its socket from the
/// event loop: readiness, never polling.
///
/// After each batch of notifications the caches are read back into `LinkFacts` and
/// compared with the previous state, so the events always describe real differences.
/// A receive-buffer overflow (ENOBUFS, which libnl reports as NLE_NOMEM) lost
/// notifications: every cache is dumped again and the comparison tells what changed.
///
/// Ownership: the manager owns its caches; the tracker owns the manager and the sync
/// socket. libnl's change callback gets an *unretained* pointer to the tracker, valid
/// because the manager is freed in `deinit` before the tracker goes away.
package final class LinkTracker: LinkSource {
    package private(set) var links: [Int: LinkFacts] = [:]

    private let loop: EventLoop
    private let handler: LinkHandler
    private let eventSocket: NetlinkSocket
    /// A second socket for re-dumps: the manager's own socket only listens.
    private let syncSocket: NetlinkSocket
    private var manager: OpaquePointer?
    private var view: RouteCacheView!
    private var descriptor: Int32 = -1
    /// Set by the change callback; interface/address changes also make the kernel drop
    /// routes without telling (IPv4 removes routes of a downed link silently).
    private var linksOrAddressesChanged = false
    private var anythingChanged = false
    /// Rules or routes changed in the batch (uplinkd's own may be among them).
    private var routingChanged = false
    /// libnl's rule cache: kept only to hear of rule changes (see `routingEntries`).
    private var rules: OpaquePointer?
    private var routingHandler: (() -> Void)?

    package init(loop: EventLoop, receiveBufferBytes: Int, handler: @escaping LinkHandler) throws(NetlinkError) {
        self.loop = loop
        self.handler = handler
        eventSocket = try NetlinkSocket(connect: false)
        syncSocket = try NetlinkSocket()

        var manager: OpaquePointer?
        let allocated = nl_cache_mngr_alloc(eventSocket.pointer, NETLINK_ROUTE, NL_AUTO_PROVIDE, &manager)
        guard allocated >= 0, let manager else { throw NetlinkError("creating the netlink cache manager", code: allocated) }
        self.manager = manager

        let user = Unmanaged.passUnretained(self).toOpaque()
        var caches: [OpaquePointer] = []
        for name in ["route/link", "route/addr", "route/route", "route/rule"] {
            var cache: OpaquePointer?
            let added = nl_cache_mngr_add(manager, name, LinkTracker.changeTrampoline, user, &cache)
            if name == "route/rule" && added < 0 {
                // A kernel built without policy routing (CONFIG_IP_MULTIPLE_TABLES) has
                // no rules to dump, and qemu-user does not pass rule messages on: the
                // uplinks are still followed, only others' rule changes go unheard.
                Log.warning("\(NetlinkError("following route/rule", code: added)); changes to routing rules are not followed")
                continue
            }
            guard added >= 0, let cache else {
                nl_cache_mngr_free(manager)
                self.manager = nil
                throw NetlinkError("following \(name)", code: added)
            }
            caches.append(cache)
        }
        view = RouteCacheView(links: caches[0], addresses: caches[1], routes: caches[2])
        rules = caches.count > 3 ? caches[3] : nil
        // The manager's first fill can drop routes that differ only by interface.
        let reloaded = RouteCacheView.reload(routes: caches[2], socket: syncSocket.pointer)
        if reloaded < 0 { Log.warning("\(NetlinkError("re-reading routes", code: reloaded))") }
        descriptor = nl_cache_mngr_get_fd(manager)
        setReceiveBuffer(bytes: receiveBufferBytes)
        links = view.allFacts(defaultRoutes: dumpDefaultRoutes())
        do {
            try loop.watch(descriptor, for: .readable) { [weak self] _ in self?.dataReady() }
        } catch {
            nl_cache_mngr_free(manager)
            self.manager = nil
            throw NetlinkError("watching the netlink socket: \(error)", code: NLE_FAILURE)
        }
    }

    deinit {
        if descriptor >= 0 { loop.unwatch(descriptor) }
        if let manager { nl_cache_mngr_free(manager) }
    }

    /// SO_RCVBUFFORCE (root) lifts the rmem_max cap so a burst of notifications fits;
    /// without the privilege fall back to SO_RCVBUF.
    private func setReceiveBuffer(bytes: Int) {
        var size = Int32(clamping: bytes)
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0
            && setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, length) != 0 {
            Log.warning("cannot size the netlink receive buffer to \(bytes) bytes: \(SystemError("setsockopt"))")
        }
    }

    private static let changeTrampoline: change_func_t = { cache, _, _, user in
        let tracker = Unmanaged<LinkTracker>.fromOpaque(user!).takeUnretainedValue()
        tracker.anythingChanged = true
        if cache == tracker.view?.links || cache == tracker.view?.addresses {
            tracker.linksOrAddressesChanged = true
        } else {
            tracker.routingChanged = true
        }
    }

    private func dataReady() {
        guard let manager else { return }
        let result = nl_cache_mngr_data_ready(manager)
        if result < 0 {
            if -result == NLE_NOMEM {
                resync()
                return
            }
            Log.warning("\(NetlinkError("reading netlink notifications", code: result))")
        }
        guard anythingChanged else { return }
        if linksOrAddressesChanged {
            refill(view.routes, "routes")
            routingChanged = true
        }
        publish(resynced: false)
    }

    /// Notifications were lost: dump everything again and compare.
    ///
    /// The queue is emptied first. While it is full the kernel marks the socket
    /// congested and drops further notifications without another ENOBUFS, so only a
    /// dump taken after the queue is empty is sure to be newer than everything lost.
    private func resync() {
        Log.warning("netlink receive buffer overflowed (ENOBUFS); re-reading links, addresses and routes")
        drainQueuedNotifications()
        refill(view.links, "links")
        refill(view.addresses, "addresses")
        refill(view.routes, "routes")
        if let rules { refill(rules, "routing rules") }
        routingChanged = true
        publish(resynced: true)
    }

    private func drainQueuedNotifications() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }
            // ENOBUFS can be reported again while draining; anything but data or EINTR
            // (EAGAIN above all) means the queue is empty.
            let code = errno
            if count < 0 && (code == EINTR || code == ENOBUFS) { continue }
            return
        }
    }

    private func refill(_ cache: OpaquePointer, _ what: String) {
        let result = cache == view.routes ? RouteCacheView.reload(routes: cache, socket: syncSocket.pointer)
                                          : nl_cache_refill(syncSocket.pointer, cache)
        if result < 0 { Log.warning("\(NetlinkError("re-reading \(what)", code: result))") }
    }

    private func publish(resynced: Bool) {
        anythingChanged = false
        linksOrAddressesChanged = false
        let current = view.allFacts(defaultRoutes: dumpDefaultRoutes())
        let events = LinkDiff.events(from: links, to: current)
        links = current
        if !events.isEmpty || resynced { handler(events, resynced, current) }
        if routingChanged {
            routingChanged = false
            routingHandler?()
        }
    }

    /// The default routes afresh (see `DefaultRouteDump`); nil after a failure, when
    /// the route cache's have to do.
    private func dumpDefaultRoutes() -> [Int: [DefaultRoute]]? {
        do {
            return try DefaultRouteDump.routes(syncSocket)
        } catch {
            Log.warning("\(error); reading default routes from libnl's cache")
            return nil
        }
    }

    // MARK: uplinkd's own routing entries

    /// The rules are dumped afresh (libnl's rule cache, which tells of changes, lacks
    /// suppress_prefixlength); the routes come from the live cache.
    package func routingEntries(_ settings: RoutingSettings) -> (rules: [RoutingRule], routes: [OwnedRoute]) {
        var rules: [RoutingRule] = []
        do {
            rules = try RuleDump.rules(syncSocket).filter(settings.owns)
        } catch {
            Log.warning("\(error)")
        }
        return (rules, RoutingEntries.routes(view.routes, ownedBy: settings))
    }

    package func watchRouting(_ handler: @escaping () -> Void) {
        routingHandler = handler
    }

    /// Reads what the kernel already queued: changes a hook just made are in the
    /// caches afterwards.
    package func catchUp() {
        dataReady()
    }

    package func removeRouting(_ settings: RoutingSettings) throws(NetlinkError) -> [String] {
        try RoutingEntries.remove(ownedBy: settings)
    }
}
