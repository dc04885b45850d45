import CAvahi
import MonotonicTime
import PadSystem

/// A host found on the LAN: its service, its addresses (IPv4 and IPv6, a link-local one with its
/// interface as scope), its port and what it announces. Found is not trusted.
public struct DiscoveredHost: Equatable, Sendable {
    public var instanceName: String
    /// The mDNS name (`box.local`).
    public var domainName: String
    public var port: UInt16
    public var addresses: [SocketAddress]
    public var advert: HostAdvert
}

/// Why no browse could run.
public enum DiscoveryError: Error, Equatable, CustomStringConvertible {
    case daemonUnreachable(String)
    case failed(String)
    public var description: String {
        switch self {
        case .daemonUnreachable(let why):
            return "cannot browse the LAN: \(why). Discovery needs avahi-daemon running (Debian: apt install avahi-daemon); give the host's address instead"
        case .failed(let why): return "browsing the LAN failed: \(why)"
        }
    }
}

/// Browses for padgate hosts through avahi-daemon for a short window, resolving each service to
/// its addresses. Runs on the calling thread; a signal ends the window early.
///
/// A LAN full of adverts costs a bound, and is not first come, first kept: every service name is
/// remembered (up to `maxServices`), resolved at most `maxResolvers` at a time, those the caller
/// prefers (the names of hosts it paired with) first, so a stranger announcing hundreds of
/// services can delay the real host's resolution but not push it out.
public enum AvahiBrowser {
    /// The most service names one browse keeps (each at most 63 bytes, DNS's label limit).
    static let maxServices = 1024
    /// Resolutions running at once.
    static let maxResolvers = 16
    /// The most resolved answers kept (a host answers once per address family and interface).
    static let maxAnswers = 4096

    /// The running avahi-daemon's version, asked over the system bus (`padgate doctor`): reads only.
    public static func daemonVersion() throws(DiscoveryError) -> String {
        guard let poll = avahi_simple_poll_new() else { throw .failed("out of memory") }
        defer { avahi_simple_poll_free(poll) }
        var error: Int32 = 0
        guard let client = avahi_client_new(avahi_simple_poll_get(poll), AvahiClientFlags(0), { _, _, _ in }, nil, &error) else {
            throw .daemonUnreachable(String(cString: avahi_strerror(error)))
        }
        defer { avahi_client_free(client) }
        return avahi_client_get_version_string(client).map { String(cString: $0) } ?? "avahi"
    }

    public static func browse(for window: Duration) throws(DiscoveryError) -> [DiscoveredHost] {
        try browse(for: window, preferring: { _ in false }, enough: { !$0.isEmpty })
    }

    /// `preferring`: service names to resolve before the others. `enough`: once the daemon has
    /// given every answer it had and all are resolved, whether what was found lets the browse end
    /// before `window` (else it waits the window out: a host may answer late, and "none answered
    /// within N s" must be true).
    public static func browse(for window: Duration, preferring: @escaping (String) -> Bool,
                              enough: ([DiscoveredHost]) -> Bool) throws(DiscoveryError) -> [DiscoveredHost] {
        guard let poll = avahi_simple_poll_new() else { throw .failed("out of memory") }
        defer { avahi_simple_poll_free(poll) }
        let state = BrowseState(preferring: preferring)
        let me = Unmanaged.passUnretained(state).toOpaque()
        var error: Int32 = 0
        guard let client = avahi_client_new(avahi_simple_poll_get(poll), AvahiClientFlags(0), { _, _, _ in }, nil, &error) else {
            throw .daemonUnreachable(String(cString: avahi_strerror(error)))
        }
        defer { avahi_client_free(client) }  // frees the browser and resolvers too
        state.client = client
        guard avahi_service_browser_new(client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), HostAdvert.serviceType, nil,
                                        AvahiLookupFlags(0), { _, interface, proto, event, name, type, domain, _, me in
            Unmanaged<BrowseState>.fromOpaque(me!).takeUnretainedValue().browsed(event, interface, proto, name, type, domain)
        }, me) != nil else {
            throw .failed(String(cString: avahi_strerror(avahi_client_errno(client))))
        }
        let deadline = MonotonicInstant.now + window
        while MonotonicInstant.now < deadline, !SignalTrap.fired {
            if state.done && enough(state.hosts()) { break }
            let step = min(deadline - .now, .milliseconds(100))
            guard avahi_simple_poll_iterate(poll, Int32(max(1, step / .milliseconds(1)))) == 0 else { break }
            state.startResolvers()
        }
        return state.hosts()
    }
}

/// What one browse has seen so far; touched only by the browsing thread (avahi's simple poll).
private final class BrowseState {
    struct Service: Hashable { var interface: AvahiIfIndex; var proto: AvahiProtocol; var name: String; var type: String; var domain: String }
    var client: OpaquePointer?
    let preferring: (String) -> Bool
    var resolved: [(name: String, domainName: String, port: UInt16, address: SocketAddress, advert: HostAdvert)] = []
    /// Every service seen (bounded), and those still to resolve, preferred ones first.
    var seen: Set<Service> = []
    var waiting: [Service] = []
    var pendingResolvers = 0
    var cacheExhausted = false
    /// Every answer the daemon had is in and resolved.
    var done: Bool { cacheExhausted && pendingResolvers == 0 && waiting.isEmpty }

    init(preferring: @escaping (String) -> Bool) { self.preferring = preferring }

    func browsed(_ event: AvahiBrowserEvent, _ interface: AvahiIfIndex, _ proto: AvahiProtocol,
                 _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain, seen.count < AvahiBrowser.maxServices else { return }
            let service = Service(interface: interface, proto: proto, name: String(cString: name), type: String(cString: type), domain: String(cString: domain))
            guard seen.insert(service).inserted else { return }
            if preferring(service.name) { waiting.insert(service, at: 0) } else { waiting.append(service) }
            startResolvers()
        case AVAHI_BROWSER_ALL_FOR_NOW:
            cacheExhausted = true
        default:
            break
        }
    }

    /// Starts resolutions up to the limit, from the front of the queue.
    func startResolvers() {
        guard let client else { return }
        while pendingResolvers < AvahiBrowser.maxResolvers, !waiting.isEmpty {
            let service = waiting.removeFirst()
            let me = Unmanaged.passUnretained(self).toOpaque()
            // The address in the family this answer came in, so a host on both gets both.
            let resolver = avahi_service_resolver_new(client, service.interface, service.proto, service.name, service.type, service.domain,
                                                      service.proto, AvahiLookupFlags(0), {
                resolver, interface, _, event, name, _, _, hostName, address, port, txt, _, me in
                let state = Unmanaged<BrowseState>.fromOpaque(me!).takeUnretainedValue()
                state.resolvedOne(event, interface, name, hostName, address, port, txt)
                avahi_service_resolver_free(resolver)
            }, me)
            if resolver != nil { pendingResolvers += 1 }
        }
    }

    func resolvedOne(_ event: AvahiResolverEvent, _ interface: AvahiIfIndex, _ name: UnsafePointer<CChar>?, _ hostName: UnsafePointer<CChar>?,
                     _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16, _ txt: UnsafeMutablePointer<AvahiStringList>?) {
        pendingResolvers -= 1
        guard event == AVAHI_RESOLVER_FOUND, let name, let hostName, let address, port != 0 else { return }
        var entries: [[UInt8]] = []
        var item = txt
        while let current = item, entries.count < HostAdvert.maxEntries {
            let size = avahi_string_list_get_size(current)
            if let text = avahi_string_list_get_text(current), size <= HostAdvert.maxEntryBytes {
                entries.append(Array(UnsafeBufferPointer(start: text, count: size)))
            }
            item = avahi_string_list_get_next(current)
        }
        guard resolved.count < AvahiBrowser.maxAnswers, let advert = HostAdvert(entries: entries),
              let socketAddress = Self.socketAddress(address, interface: interface, port: port) else { return }
        resolved.append((String(cString: name), String(cString: hostName), port, socketAddress, advert))
    }

    /// avahi gives a link-local IPv6 address without its scope: the interface it came in on is it.
    static func socketAddress(_ address: UnsafePointer<AvahiAddress>, interface: AvahiIfIndex, port: UInt16) -> SocketAddress? {
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        guard avahi_address_snprint(&buffer, buffer.count, address) != nil else { return nil }
        var text = String(nulTerminated: buffer)
        if address.pointee.proto == AVAHI_PROTO_INET6, text.lowercased().hasPrefix("fe80:"), interface > 0 { text += "%\(interface)" }
        return try? SocketAddress(ip: text, port: port)
    }

    /// One host per service name, its addresses IPv6 first then IPv4, each once.
    func hosts() -> [DiscoveredHost] {
        var byName: [String: DiscoveredHost] = [:]
        var order: [String] = []
        for answer in resolved {
            if var host = byName[answer.name] {
                guard host.advert == answer.advert, host.port == answer.port else { continue }  // a second, different advert under one name is not merged
                if !host.addresses.contains(answer.address) { host.addresses.append(answer.address) }
                byName[answer.name] = host
            } else {
                order.append(answer.name)
                byName[answer.name] = DiscoveredHost(instanceName: answer.name, domainName: answer.domainName, port: answer.port,
                                                     addresses: [answer.address], advert: answer.advert)
            }
        }
        return order.map { name in
            var host = byName[name]!
            host.addresses.sort { $0.family == .ipv6 && $1.family == .ipv4 }
            return host
        }
    }
}
