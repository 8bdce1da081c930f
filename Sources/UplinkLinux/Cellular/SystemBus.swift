import CSystemd
import CSystemdShim
import Glibc
import UplinkCore

/// One connection to the D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured) driven
/// by sd-bus on the agent's event loop: the connection's descriptor is watched by the
/// loop and its deadline is one of the loop's timers, so there is no GLib main loop and
/// no thread. It offers signal subscriptions and asynchronous method calls whose
/// arguments and replies are `DBusValue`s (read with `BusMessage`'s bounds).
///
/// Ownership: the connection owns the sd-bus object and its match slots, and releases
/// them in `close` (after which it calls nothing back). sd-bus callbacks are
/// non-capturing trampolines: each match and each method call gets a `Callback` object
/// retained once as its user data and released by its slot's destroy callback, so a
/// handler lives exactly as long as the slot that can call it.
final class SystemBus {
    /// The connection failed after it was open (its owner connects again).
    var onLost: (() -> Void)?
    private let loop: EventLoop
    private var bus: OpaquePointer?
    private var slots: [OpaquePointer] = []
    private var timer: EventLoop.TimerID?
    /// The descriptor the loop watches for this connection: sd-bus may have closed it
    /// (and no longer name it) by the time the connection is found failed.
    private var watchedDescriptor: Int32?
    static let callTimeoutMicroseconds: UInt64 = 25_000_000

    init(loop: EventLoop) {
        self.loop = loop
    }

    deinit {
        close()
    }

    /// Connects to the system bus.
    func open(description: String) throws(SystemError) {
        var opened: OpaquePointer?
        let code = sd_bus_open_system(&opened)
        // The shim's own answer when libsystemd.so.0 (libsystemd0) could not be loaded.
        guard code != -ELIBACC else { throw SystemError("loading libsystemd.so.0 for sd-bus", errno: ELIBACC) }
        guard code >= 0, let opened else { throw SystemError("sd_bus_open_system", errno: -code) }
        bus = opened
        _ = sd_bus_set_description(opened, description)
        rearm()
    }

    /// Leaves the bus: every subscription and pending call ends without a callback.
    func close() {
        if let timer { loop.cancel(timer) }
        timer = nil
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        if let watchedDescriptor { loop.unwatch(watchedDescriptor) }
        watchedDescriptor = nil
        guard let bus else { return }
        sd_bus_flush_close_unref(bus)
        self.bus = nil
    }

    // MARK: callbacks

    /// A handler sd-bus holds as a slot's user data.
    private final class Callback {
        let handle: (OpaquePointer) -> Void
        init(_ handle: @escaping (OpaquePointer) -> Void) { self.handle = handle }
    }

    private static let trampoline: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        Unmanaged<Callback>.fromOpaque(userdata).takeUnretainedValue().handle(message)
        return 0
    }

    /// Hands the slot's user data to sd-bus to release with the slot.
    private static func releaseWithSlot(_ slot: OpaquePointer) {
        _ = sd_bus_slot_set_destroy_callback(slot) { userdata in
            Unmanaged<Callback>.fromOpaque(userdata!).release()
        }
    }

    // MARK: signals

    /// Subscribes to signals matching `rule` (a D-Bus match rule); `handler` gets each
    /// signal's path, member and arguments (nil when malformed or over the bounds).
    func subscribe(_ rule: String, handler: @escaping (_ path: String, _ member: String, _ arguments: [DBusValue]?) -> Void)
        throws(SystemError) {
        guard let bus else { throw SystemError("subscribing while not connected", errno: ENOTCONN) }
        let callback = Unmanaged.passRetained(Callback { message in
            let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
            let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
            handler(path, member, BusMessage.read(message))
        })
        var slot: OpaquePointer?
        let code = sd_bus_add_match(bus, &slot, rule, SystemBus.trampoline, callback.toOpaque())
        guard code >= 0, let slot else {
            callback.release()
            throw SystemError("sd_bus_add_match \(rule)", errno: -code)
        }
        SystemBus.releaseWithSlot(slot)
        slots.append(slot)
        rearm()
    }

    // MARK: calls

    /// How a call ended.
    enum Reply {
        case arguments([DBusValue])
        /// An error reply: its D-Bus name and message.
        case error(name: String, message: String)
        /// No usable reply: not connected, arguments that cannot be written, a
        /// malformed answer.
        case failed(SystemError)
    }

    /// Calls a method without starting the destination (no bus activation);
    /// `completion` runs once, on the loop, unless the connection closes first.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
              arguments: [DBusValue] = [], completion: @escaping (Reply) -> Void) {
        guard let bus else { return completion(.failed(SystemError("calling while not connected", errno: ENOTCONN))) }
        var message: OpaquePointer?
        let made = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard made >= 0, let message else { return completion(.failed(SystemError("sd_bus_message_new_method_call", errno: -made))) }
        defer { sd_bus_message_unref(message) }
        _ = sd_bus_message_set_auto_start(message, 0)
        guard arguments.allSatisfy({ BusMessage.append($0, to: message) }) else {
            return completion(.failed(SystemError("writing the arguments of \(member)", errno: EINVAL)))
        }
        let callback = Unmanaged.passRetained(Callback { reply in
            if let error = sd_bus_message_get_error(reply), let name = error.pointee.name {
                completion(.error(name: String(cString: name), message: error.pointee.message.map { String(cString: $0) } ?? ""))
            } else if let arguments = BusMessage.read(reply) {
                completion(.arguments(arguments))
            } else {
                completion(.failed(SystemError("reading the reply of \(member) (malformed or over the bounds)", errno: EBADMSG)))
            }
        })
        var slot: OpaquePointer?
        let code = sd_bus_call_async(bus, &slot, message, SystemBus.trampoline, callback.toOpaque(),
                                     SystemBus.callTimeoutMicroseconds)
        guard code >= 0, let slot else {
            callback.release()
            return completion(.failed(SystemError("sd_bus_call_async \(member)", errno: -code)))
        }
        // The bus keeps the slot until the reply or its timeout.
        SystemBus.releaseWithSlot(slot)
        _ = sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
        rearm()
    }

    // MARK: the connection on the loop

    /// Lets sd-bus do its work, then tells the loop what it waits for next.
    private func process() {
        guard let bus else { return }
        while true {
            let code = sd_bus_process(bus, nil)
            if code == 0 { break }
            if code < 0 {
                Log.warning("system bus: the connection failed (\(SystemError("sd_bus_process", errno: -code)))")
                return lost()
            }
        }
        rearm()
    }

    private func rearm() {
        guard let bus else { return }
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        guard fd >= 0, events >= 0 else { return lostLater() }
        var interest: EventLoop.Interest = []
        if Int16(events) & Int16(POLLIN) != 0 { interest.insert(.readable) }
        if Int16(events) & Int16(POLLOUT) != 0 { interest.insert(.writable) }
        if let watched = watchedDescriptor, watched != fd { loop.unwatch(watched) }
        do {
            try loop.watch(fd, for: interest.isEmpty ? .readable : interest) { [unowned self] _ in process() }
            watchedDescriptor = fd
        } catch {
            Log.warning("system bus: cannot watch the connection: \(error)")
            return lostLater()
        }
        if let timer { loop.cancel(timer) }
        timer = nil
        let delay = uplinkd_bus_timeout_milliseconds(bus)
        if delay >= 0 {
            timer = loop.schedule(afterMilliseconds: Int(clamping: delay)) { [weak self] in
                self?.timer = nil
                self?.process()
            }
        }
    }

    /// Possibly inside sd-bus's own processing: the connection goes on the next turn.
    private func lostLater() {
        loop.schedule(afterMilliseconds: 0) { [weak self] in self?.lost() }
    }

    private func lost() {
        close()
        onLost?()
    }
}
