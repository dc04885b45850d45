import Transport

/// What a host announces about itself in its DNS-SD TXT record (docs/discovery.md). Everything in
/// it is advisory: a client trusts a host only by the identity it pinned when pairing, never
/// because an advert said so. Read from the LAN, so every field is bounded and checked.
public struct HostAdvert: Equatable, Sendable {
    /// The DNS-SD service type (`avahi-browse _padgate._udp` shows it).
    public static let serviceType = "_padgate._udp"
    /// The most TXT entries and bytes per entry read from a peer's record (DNS caps an entry at 255).
    public static let maxEntries = 16
    public static let maxEntryBytes = 255
    static let maxNameBytes = 63

    /// The control protocol's version (`v`).
    public var protocolVersion: Int
    /// The host's certificate fingerprint (`id`): shown, and compared with the pinned one.
    public var fingerprint: String
    /// Whether a pairing PIN is armed right now (`pin`: 1 or 0).
    public var pairingOpen: Bool
    /// The host's own name (`name`), as `hostname` says.
    public var hostName: String

    public init(protocolVersion: Int, fingerprint: String, pairingOpen: Bool, hostName: String) {
        self.protocolVersion = protocolVersion; self.fingerprint = fingerprint
        self.pairingOpen = pairingOpen; self.hostName = String(hostName.utf8.prefix(Self.maxNameBytes)) ?? "padgate"
    }

    /// The TXT entries, `key=value` each.
    public var entries: [String] {
        ["v=\(protocolVersion)", "id=\(fingerprint)", "pin=\(pairingOpen ? 1 : 0)", "name=\(hostName)"]
    }

    /// Reads a peer's entries; nil when the record is not a padgate host's (a field missing or
    /// malformed), so nothing half-read is ever shown or used.
    public init?(entries: [[UInt8]]) {
        var fields: [String: String] = [:]
        for entry in entries.prefix(Self.maxEntries) where entry.count <= Self.maxEntryBytes {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")),
                  let key = String(validating: entry[..<equals], as: UTF8.self),
                  let value = String(validating: entry[(equals + 1)...], as: UTF8.self) else { continue }
            if fields[key] == nil { fields[key] = value }  // RFC 6763 §6.4: the first of a repeated key counts
        }
        guard let versionText = fields["v"], let version = Int(versionText), (1...255).contains(version),
              let fingerprint = fields["id"], TLSIdentity.isFingerprint(fingerprint),
              let pin = fields["pin"], pin == "0" || pin == "1",
              let name = fields["name"], !name.isEmpty, name.utf8.count <= Self.maxNameBytes,
              name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else { return nil }
        self.init(protocolVersion: version, fingerprint: fingerprint, pairingOpen: pin == "1", hostName: name)
    }
}
