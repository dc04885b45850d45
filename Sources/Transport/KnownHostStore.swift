import Foundation
import PadSystem

/// A host this client trusts, keyed by its identity: the same host reached over IPv4, IPv6, a
/// link-local address or a name it announced is one entry, and a reinstalled host at a known
/// address is a changed one.
public struct KnownHost: Equatable, Sendable {
    public var fingerprint: String
    /// What the host calls itself (its announced name), or how it was first reached.
    public var name: String
    /// The HOST[:PORT] forms people typed to reach it, newest first (at most `maxAddresses`).
    public var addresses: [String]
    public init(fingerprint: String, name: String, addresses: [String]) {
        self.fingerprint = fingerprint; self.name = name; self.addresses = addresses
    }

    /// `address` becomes the newest way to reach it; the oldest beyond `KnownHostStore.maxAddresses` go.
    mutating func remember(_ address: String) {
        addresses.removeAll { $0 == address }
        addresses.insert(address, at: 0)
        addresses = Array(addresses.prefix(KnownHostStore.maxAddresses))
    }
}

/// The client's `known_hosts`: one line per host, `fingerprint name address…` (each a `LineToken`),
/// 0600 in a 0700 directory. Lines of the older `address fingerprint` form are read as hosts too.
public struct KnownHostStore {
    public static let maxAddresses = 8
    public let url: URL
    public private(set) var hosts: [KnownHost] = []
    /// Lines that could not be read (reported by whoever loads the store).
    public private(set) var unreadableLines: [Int] = []

    public init(url: URL) throws {
        self.url = url
        for (number, parts) in PrivateFiles.storeLines(url) {
            let tokens = parts.map { LineToken.decode($0) }
            guard tokens.count >= 2, tokens.allSatisfy({ $0 != nil }) else { unreadableLines.append(number); continue }
            let words = tokens.map { $0! }
            if TLSIdentity.isFingerprint(words[0]) {
                merge(KnownHost(fingerprint: words[0], name: words[1], addresses: Array(words.dropFirst(2))))
            } else if words.count == 2, TLSIdentity.isFingerprint(words[1]) {
                // The older form: the address it was paired at, then its fingerprint.
                merge(KnownHost(fingerprint: words[1], name: Self.hostPart(words[0]), addresses: [words[0]]))
            } else {
                unreadableLines.append(number)
            }
        }
    }

    public func host(fingerprint: String) -> KnownHost? { hosts.first { $0.fingerprint == fingerprint } }
    /// The host last pinned at `address` (as typed).
    public func host(at address: String) -> KnownHost? { hosts.first { $0.addresses.contains(address) } }
    public func host(named name: String) -> KnownHost? { hosts.first { $0.name == name } }

    public enum Verdict: Equatable { case known, firstUse }

    /// Trust by identity. A known fingerprint is accepted wherever it was reached (and `address`
    /// is remembered for it); an unknown one at an address or name pinned to another host is
    /// refused as changed; otherwise it is trusted on first use and remembered.
    public mutating func check(address: String?, name: String?, presented: String) throws -> Verdict {
        if var known = host(fingerprint: presented) {
            if let address, known.addresses.first != address {
                known.remember(address)
                merge(known)
                try save()
            }
            return .known
        }
        if let address, let pinned = host(at: address) {
            throw TLSError.fingerprintChanged(host: address, expected: pinned.fingerprint, got: presented)
        }
        if let name, let pinned = host(named: name) {
            throw TLSError.fingerprintChanged(host: name, expected: pinned.fingerprint, got: presented)
        }
        try pin(fingerprint: presented, name: name ?? address.map(Self.hostPart) ?? presented, address: address)
        return .firstUse
    }

    /// What `check` would say, changing nothing: a host this client knows is `.known`, one at an
    /// address or name pinned to another identity throws as changed, anything else is `.firstUse`
    /// (and stays unpinned).
    public func verdict(address: String?, name: String?, presented: String) throws -> Verdict {
        if host(fingerprint: presented) != nil { return .known }
        if let address, let pinned = host(at: address) {
            throw TLSError.fingerprintChanged(host: address, expected: pinned.fingerprint, got: presented)
        }
        if let name, let pinned = host(named: name) {
            throw TLSError.fingerprintChanged(host: name, expected: pinned.fingerprint, got: presented)
        }
        return .firstUse
    }

    /// Pins a host (pairing proved it): `address` and `name` now mean this identity alone.
    public mutating func pin(fingerprint: String, name: String, address: String?) throws {
        var entry = host(fingerprint: fingerprint) ?? KnownHost(fingerprint: fingerprint, name: name, addresses: [])
        entry.name = name
        if let address {
            for index in hosts.indices { hosts[index].addresses.removeAll { $0 == address } }
            entry.remember(address)
        }
        // A name now belongs to this identity: an older host of that name loses it (it keeps its addresses).
        hosts.removeAll { $0.fingerprint != fingerprint && $0.name == name && $0.addresses.isEmpty }
        for index in hosts.indices where hosts[index].fingerprint != fingerprint && hosts[index].name == name {
            hosts[index].name = hosts[index].addresses.first.map(Self.hostPart) ?? hosts[index].fingerprint
        }
        merge(entry)
        try save()
    }

    /// Forgets the host named by its fingerprint, its name or one of its addresses.
    public mutating func forget(_ text: String) throws -> KnownHost? {
        guard let entry = host(fingerprint: text) ?? host(at: text) ?? host(named: text) else { return nil }
        hosts.removeAll { $0.fingerprint == entry.fingerprint }
        try save()
        return entry
    }

    /// What a discovered host is to this client. Discovery proves nothing: `changed` means a
    /// host announces a pinned name with another identity, and connecting to it is refused.
    public enum Standing: String, Sendable { case paired, unknown, changed }

    /// `addresses`: where it was found, as HOST:PORT; one pinned to another identity makes it changed too.
    public func standing(fingerprint: String, name: String, addresses: [String]) -> Standing {
        if host(fingerprint: fingerprint) != nil { return .paired }
        return host(named: name) != nil || addresses.contains(where: { host(at: $0) != nil }) ? .changed : .unknown
    }

    /// `box:47800` → `box`, `[fe80::1%eth0]:47800` → `fe80::1%eth0`.
    static func hostPart(_ address: String) -> String { HostAndPort(address, defaultPort: 1)?.host ?? address }

    private mutating func merge(_ entry: KnownHost) {
        if let index = hosts.firstIndex(where: { $0.fingerprint == entry.fingerprint }) { hosts[index] = entry } else { hosts.append(entry) }
    }

    private func save() throws {
        let lines = hosts.map { host in ([host.fingerprint, host.name] + host.addresses).map(LineToken.encode).joined(separator: " ") }
        try PrivateFiles.write(Data((lines.joined(separator: "\n") + "\n").utf8), to: url)
    }
}

