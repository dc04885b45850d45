import Foundation

/// The local control socket's protocol (`padgate host pair|clients|revoke|status`, docs/service.md),
/// typed as the wire protocol is: one JSON object a line each way. The host encodes these types,
/// `padgate host` decodes them, and every key on the socket and in `--json` is named here once,
/// in the types' CodingKeys. A field that is absent when decoded is an error that names it (see
/// `HostControl.explain`); a field that may be empty is sent as JSON `null` (`Nullable`), never left out.
public enum HostControl {
    /// One line: keys sorted, as the host has always written them.
    public static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }

    /// For a person or a script (`--json`): indented, keys sorted, slashes as they are.
    public static func encodePretty(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }

    /// What is wrong with an answer that did not decode, in a few words: `"no field 'sessions[0].link'"`.
    public static func explain(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ keys: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            var text = ""
            for key in keys + (last.map { [$0] } ?? []) {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context): return "no field '\(path(context.codingPath, key))'"
        case .valueNotFound(_, let context): return "'\(path(context.codingPath))' is null"
        case .typeMismatch(let type, let context):
            return context.codingPath.isEmpty ? "not a JSON object" : "'\(path(context.codingPath))' is not \(type)"
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "not JSON" : "'\(path(context.codingPath))': \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    // MARK: requests

    /// What `padgate host` asks: `{"command": "status"}`, `{"command": "revoke", "client": …}`.
    public enum Request: Codable, Equatable, Sendable {
        case status, clients, revoke(client: String), pair

        enum CodingKeys: String, CodingKey { case command, client }
        enum Command: String, Codable { case status, clients, revoke, pair }

        /// A request that is JSON but not one of these, with what the host answers.
        public enum Refusal: Error, CustomStringConvertible {
            case unknownCommand, revokeNeedsClient
            public var description: String {
                switch self {
                case .unknownCommand: "unknown command; the commands are status, clients, revoke, pair"
                case .revokeNeedsClient: "revoke needs a client name or fingerprint"
                }
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let command = try? container.decode(Command.self, forKey: .command) else { throw Refusal.unknownCommand }
            switch command {
            case .status: self = .status
            case .clients: self = .clients
            case .pair: self = .pair
            case .revoke:
                guard let client = try? container.decode(String.self, forKey: .client), !client.isEmpty else { throw Refusal.revokeNeedsClient }
                self = .revoke(client: client)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .status: try container.encode(Command.status, forKey: .command)
            case .clients: try container.encode(Command.clients, forKey: .command)
            case .pair: try container.encode(Command.pair, forKey: .command)
            case .revoke(let client):
                try container.encode(Command.revoke, forKey: .command)
                try container.encode(client, forKey: .client)
            }
        }
    }

    // MARK: replies

    /// The host refused or failed a request: `{"error": …}`, in place of any other reply.
    public struct Failure: Codable, Equatable, Sendable, Error {
        public var error: String
        public init(_ error: String) { self.error = error }
    }

    /// `status`.
    public struct Status: Codable, Equatable, Sendable {
        public var uptimeSeconds: Int
        /// `"port 7373"`.
        public var listening: String
        /// The host's certificate fingerprint.
        public var identity: String
        public var pairingPINArmed: Bool
        /// `"serve --pair"` or the `host pair` whose PIN it is.
        @Nullable public var pairingArmedBy: String?
        @Nullable public var pairingExpiresInSeconds: Int?
        public var sessions: [Session]
        /// Every pad by its player number, across clients, and the numbers waiting for their pads.
        public var players: [Player]
        public var messagesDecoded: Int
        /// By reason.
        public var datagramsRejected: [String: Int]
        /// By reason.
        public var connectionsRefused: [String: Int]
        public var leaseExpiries: Int

        enum CodingKeys: String, CodingKey {
            case uptimeSeconds = "uptime_seconds", listening, identity
            case pairingPINArmed = "pairing_pin_armed", pairingArmedBy = "pairing_armed_by", pairingExpiresInSeconds = "pairing_expires_in_seconds"
            case sessions, players, messagesDecoded = "messages_decoded", datagramsRejected = "datagrams_rejected"
            case connectionsRefused = "connections_refused", leaseExpiries = "lease_expiries"
        }

        /// A live session, named by the paired record its certificate matches (`client`, null if
        /// none): the name its hello carried is the peer's own claim, kept apart in `helloName`.
        public struct Session: Codable, Equatable, Sendable {
            /// Its id, hexadecimal.
            public var session: String
            @Nullable public var client: String?
            public var paired: Bool
            public var helloName: String
            public var address: String
            public var fingerprint: String
            /// One line a pad (`HostAdministration.padLine`).
            public var pads: [String]
            public var lastHeardMilliseconds: Int
            public var datagramsReceived: UInt64
            public var datagramsRejected: Int
            public var datagramsOverBudget: Int
            /// By reason (`SessionBudget.Excess`).
            public var overBudget: [String: Int]
            /// As the client measures it (its pings carry the figures): null until it has.
            @Nullable public var link: Link?

            enum CodingKeys: String, CodingKey {
                case session, client, paired, helloName = "hello_name", address, fingerprint, pads
                case lastHeardMilliseconds = "last_heard_ms", datagramsReceived = "datagrams_received", datagramsRejected = "datagrams_rejected"
                case datagramsOverBudget = "datagrams_over_budget", overBudget = "over_budget", link
            }
        }

        /// A player number (`PlayerSlots`): its pad and client, or how long it has waited for them.
        public struct Player: Codable, Equatable, Sendable {
            public var player: Int
            /// The paired record of its client (null: none matches).
            @Nullable public var client: String?
            public var fingerprint: String
            /// Its session (hexadecimal) and the pad's line there; null while the number waits.
            @Nullable public var session: String?
            @Nullable public var pad: String?
            /// Seconds since its pad went; null while the pad is here.
            @Nullable public var absentSeconds: Int?

            enum CodingKeys: String, CodingKey {
                case player, client, fingerprint, session, pad, absentSeconds = "absent_seconds"
            }
        }

        public struct Link: Codable, Equatable, Sendable {
            public var roundTripMilliseconds: Double
            public var jitterMilliseconds: Double
            public var lossToHostPercent: Double
            public var lossToClientPercent: Double

            enum CodingKeys: String, CodingKey {
                case roundTripMilliseconds = "round_trip_ms", jitterMilliseconds = "jitter_ms"
                case lossToHostPercent = "loss_to_host_percent", lossToClientPercent = "loss_to_client_percent"
            }
        }
    }

    /// `clients`: `{"clients": [...]}`.
    public struct Clients: Codable, Equatable, Sendable {
        public var clients: [Client]

        /// A paired client: when it paired and was last seen (ISO 8601, null if not recorded).
        public struct Client: Codable, Equatable, Sendable {
            public var name: String
            public var fingerprint: String
            @Nullable public var pairedAt: String?
            @Nullable public var lastSeen: String?
            public var connected: Bool
            /// Its pads now, as in `Status.Session.pads`.
            public var pads: [String]

            enum CodingKeys: String, CodingKey {
                case name, fingerprint, pairedAt = "paired_at", lastSeen = "last_seen", connected, pads
            }
        }
    }

    /// `revoke`'s answer: whom it forgot, and how many of its sessions it ended.
    public struct Revoked: Codable, Equatable, Sendable {
        public var revoked: String
        public var fingerprint: String
        public var sessionsEnded: Int

        enum CodingKeys: String, CodingKey { case revoked, fingerprint, sessionsEnded = "sessions_ended" }
    }

    /// `pair`'s answers: `armed` first, then `newPIN` after too many wrong PINs, until one of the
    /// others ends the request.
    public enum PairReply: Codable, Equatable, Sendable {
        /// `{"pin", "expires_in_seconds"}`.
        case armed(pin: String, expiresInSeconds: Int)
        /// `{"pin", "reason"}`: the PIN rotated; the previous one no longer works.
        case newPIN(pin: String, reason: String)
        /// `{"paired": name, "fingerprint"}`.
        case paired(name: String, fingerprint: String)
        /// `{"replaced": true, "by"}`: another `host pair` armed its PIN in place of this one.
        case replaced(by: String)
        /// `{"expired": true}`.
        case expired
        /// `{"cancelled": true}`: the host ended the request (this end hung up).
        case cancelled

        enum CodingKeys: String, CodingKey {
            case pin, expiresInSeconds = "expires_in_seconds", reason, paired, fingerprint, replaced, by, expired, cancelled
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if container.contains(.paired) {
                self = .paired(name: try container.decode(String.self, forKey: .paired), fingerprint: try container.decode(String.self, forKey: .fingerprint))
            } else if container.contains(.pin) {
                let pin = try container.decode(String.self, forKey: .pin)
                self = container.contains(.reason) ? .newPIN(pin: pin, reason: try container.decode(String.self, forKey: .reason))
                    : .armed(pin: pin, expiresInSeconds: try container.decode(Int.self, forKey: .expiresInSeconds))
            } else if try container.decodeIfPresent(Bool.self, forKey: .replaced) == true {
                self = .replaced(by: try container.decode(String.self, forKey: .by))
            } else if try container.decodeIfPresent(Bool.self, forKey: .expired) == true {
                self = .expired
            } else if try container.decodeIfPresent(Bool.self, forKey: .cancelled) == true {
                self = .cancelled
            } else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an answer to pair (no pin, paired, replaced, expired or cancelled)"))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .armed(let pin, let seconds):
                try container.encode(pin, forKey: .pin)
                try container.encode(seconds, forKey: .expiresInSeconds)
            case .newPIN(let pin, let reason):
                try container.encode(pin, forKey: .pin)
                try container.encode(reason, forKey: .reason)
            case .paired(let name, let fingerprint):
                try container.encode(name, forKey: .paired)
                try container.encode(fingerprint, forKey: .fingerprint)
            case .replaced(let by):
                try container.encode(true, forKey: .replaced)
                try container.encode(by, forKey: .by)
            case .expired: try container.encode(true, forKey: .expired)
            case .cancelled: try container.encode(true, forKey: .cancelled)
            }
        }
    }
}

/// A field that is always there, JSON `null` when it has no value: encoded as `null` (where a
/// plain optional would be left out), and an error when absent on decoding (where a plain
/// optional would quietly be nil), so both sides agree on every key.
@propertyWrapper
public struct Nullable<Value: Codable & Sendable>: Codable, Sendable {
    public var wrappedValue: Value?
    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension Nullable: Equatable where Value: Equatable {}
