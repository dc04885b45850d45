import CAvahi
import Dispatch
import Logging
import PadSystem

/// Publishes the host as a DNS-SD service through the system's avahi-daemon (over D-Bus), on
/// avahi's own thread. Without a daemon the host serves as before: it says once that discovery is
/// off and why, and announces as soon as a daemon appears; after a daemon restart it announces
/// again. A name taken on the LAN is replaced by avahi's alternative ("padgate on box #2").
public final class AvahiAnnouncer: @unchecked Sendable {
    public private(set) var instanceName: String
    let port: UInt16
    private var advert: HostAdvert
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var group: OpaquePointer?
    private var saidOff = false
    private var retry: OpaquePointer?
    var logger: Logger
    /// How often a host with no system bus at all looks for one again.
    static let busRetry: Duration = .seconds(5)
    /// How long `serve` waits for its announcement before it says it is ready anyway: avahi's
    /// probing takes about a second (three probes 250 ms apart, then the announcement).
    public static let settleLimit: Duration = .seconds(5)
    /// Signalled once the announcement is established or discovery is known to be off.
    private let settled = DispatchSemaphore(value: 0)
    private let settledOnce = OnceFlag()

    /// Nil when avahi cannot even make its event loop (out of memory).
    public init?(instanceName: String, port: UInt16, advert: HostAdvert, logger: Logger = Logger(label: "padgate.host.discovery")) {
        guard let poll = avahi_threaded_poll_new() else { return nil }
        self.poll = poll
        self.instanceName = String(instanceName.utf8.prefix(63)) ?? "padgate"
        self.port = port
        self.advert = advert
        self.logger = logger
    }

    deinit { avahi_threaded_poll_free(poll) }

    public func start() {
        connect()
        avahi_threaded_poll_start(poll)
    }

    /// Waits until the LAN can see this host (its service established) or discovery is known to
    /// be off (no daemon, a failure): true then, false if `timeout` ran out first.
    public func waitUntilSettled(timeout: Duration) -> Bool {
        let nanoseconds = max(0, timeout / .nanoseconds(1))
        guard settled.wait(timeout: .now() + .nanoseconds(Int(min(nanoseconds, Double(Int.max))))) == .success else { return false }
        settled.signal()  // later waits return at once too
        return true
    }

    private func settle() { settledOnce.once { settled.signal() } }

    /// Withdraws the service (a goodbye goes out at once) and stops avahi's thread.
    public func stop() {
        avahi_threaded_poll_stop(poll)
        if let retry { avahi_threaded_poll_get(poll).pointee.timeout_free(retry); self.retry = nil }
        if let client { avahi_client_free(client) }  // frees the group too
        client = nil; group = nil
    }

    /// A new TXT record (the PIN was armed or used): the LAN sees it within a second.
    public func update(_ advert: HostAdvert) {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        guard advert != self.advert else { return }
        self.advert = advert
        guard let group, avahi_entry_group_is_empty(group) == 0 else { return }
        let result = withTXT(advert) { txt in
            avahi_entry_group_update_service_txt_strlst(group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                                                        instanceName, HostAdvert.serviceType, nil, txt)
        }
        if result < 0 { logger.warning("could not update the DNS-SD record: \(Self.text(result))") }
    }

    // MARK: avahi's thread (or start(), before it runs)

    private func connect() {
        var error: Int32 = 0
        let me = Unmanaged.passUnretained(self).toOpaque()
        client = avahi_client_new(avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, { client, state, me in
            Unmanaged<AvahiAnnouncer>.fromOpaque(me!).takeUnretainedValue().clientChanged(client!, state)
        }, me, &error)
        if client == nil {
            discoveryOff("cannot reach the system bus (\(Self.text(error))); is dbus running?")
            scheduleReconnect()
        }
    }

    private func scheduleReconnect() {
        let api = avahi_threaded_poll_get(poll)!
        var when = timeval()
        avahi_elapse_time(&when, UInt32(Self.busRetry / .milliseconds(1)), 0)
        let me = Unmanaged.passUnretained(self).toOpaque()
        if let retry { api.pointee.timeout_update(retry, &when); return }
        retry = api.pointee.timeout_new(api, &when, { _, me in
            let announcer = Unmanaged<AvahiAnnouncer>.fromOpaque(me!).takeUnretainedValue()
            if announcer.client == nil { announcer.connect() }
        }, me)
    }

    private func clientChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            publish(client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The daemon's own host name is being (re)established: withdraw until it runs again.
            if let group { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            discoveryOff("avahi-daemon is not running; this host will announce itself once it starts")
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(client)
            if error == AVAHI_ERR_DISCONNECTED {
                // The daemon went away (restarted): a new client waits for it and announces again.
                logger.notice("avahi-daemon went away; announcing again when it is back")
                avahi_client_free(client)
                self.client = nil; group = nil
                connect()
            } else {
                discoveryOff("avahi failed: \(Self.text(error))")
            }
        default:
            break
        }
    }

    private func publish(_ client: OpaquePointer) {
        if group == nil {
            let me = Unmanaged.passUnretained(self).toOpaque()
            group = avahi_entry_group_new(client, { group, state, me in
                Unmanaged<AvahiAnnouncer>.fromOpaque(me!).takeUnretainedValue().groupChanged(group!, state)
            }, me)
            guard group != nil else { return discoveryOff("avahi refused a service entry: \(Self.text(avahi_client_errno(client)))") }
        }
        guard let group, avahi_entry_group_is_empty(group) != 0 else { return }
        var result: Int32 = 0
        for _ in 0..<16 {
            result = withTXT(advert) { txt in
                avahi_entry_group_add_service_strlst(group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                                                     instanceName, HostAdvert.serviceType, nil, nil, port, txt)
            }
            guard result == AVAHI_ERR_COLLISION else { break }
            rename()
        }
        if result >= 0 { result = avahi_entry_group_commit(group) }
        if result < 0 { discoveryOff("avahi could not publish the service: \(Self.text(result))") }
    }

    private func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            logger.info("announced on the LAN as '\(instanceName)' (\(HostAdvert.serviceType), port \(port))")
            settle()
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another machine announces this name: take avahi's alternative and publish again.
            rename()
            avahi_entry_group_reset(group)
            if let client = avahi_entry_group_get_client(group) { publish(client) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            discoveryOff("avahi dropped the service: \(Self.text(avahi_client_errno(avahi_entry_group_get_client(group))))")
        default:
            break
        }
    }

    private func rename() {
        guard let alternative = avahi_alternative_service_name(instanceName) else { return }
        instanceName = String(cString: alternative)
        avahi_free(alternative)
        logger.notice("another service on the LAN has that name; announcing as '\(instanceName)'")
    }

    /// Said once a run: a daemon that restarts is told by its own notice, not by this again.
    private func discoveryOff(_ why: String) {
        settle()
        guard !saidOff else { return }
        saidOff = true
        logger.warning("discovery is off: \(why); clients can still connect by address (--no-announce hides this)")
    }

    private func withTXT(_ advert: HostAdvert, _ body: (UnsafeMutablePointer<AvahiStringList>?) -> Int32) -> Int32 {
        var list: UnsafeMutablePointer<AvahiStringList>?
        for entry in advert.entries.reversed() { list = avahi_string_list_add(list, entry) }
        defer { avahi_string_list_free(list) }
        return body(list)
    }

    static func text(_ error: Int32) -> String { String(cString: avahi_strerror(error)) }
}
