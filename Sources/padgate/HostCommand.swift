import ArgumentParser
import Foundation
import Glibc
import MonotonicTime
import PadHost
import PadSystem
import Transport

/// `padgate host …`: manage the host running on this machine through its local control socket
/// (docs/service.md): pair a new client while it serves others, list and revoke clients, see
/// what it is doing.
struct HostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Manage the host running on this machine: pair, list and revoke clients, show its status.",
        discussion: "Talks to the running 'padgate serve' through its control socket in $PADGATE_RUNTIME_DIR, systemd's $RUNTIME_DIRECTORY, $XDG_RUNTIME_DIR/padgate or /run/padgate. Allowed for root, the host's user and members of the group 'padgate'.",
        subcommands: [Pair.self, Clients.self, Revoke.self, Status.self])

    /// One request to the running host; its replies, one JSON object each.
    struct Link {
        let socket: OwnedDescriptor
        var reader: LineReader

        init() throws {
            let path = try PadgatePaths.checkedRuntimeDirectory().appendingPathComponent(HostAdministration.socketName).path
            do { socket = try LocalSocket.connect(to: path) } catch {
                throw InputFile.ReadError("cannot reach a running host at \(path) (\(error.errno)): is 'padgate serve' running, as this user or with PADGATE_RUNTIME_DIR set alike?")
            }
            reader = LineReader(socket.descriptor, limit: 1 << 20)
        }

        /// A host that refuses a peer says why and closes before reading: the write may then fail
        /// (EPIPE, no SIGPIPE), and the reason is in the reply.
        func send(_ request: [String: Any]) throws {
            _ = Signals.ignoreBrokenPipes
            var data = try JSONSerialization.data(withJSONObject: request)
            data.append(0x0a)
            do { try data.withUnsafeBytes { try socket.descriptor.writeAll($0) } } catch let error as SystemCallError where error.errno == .brokenPipe {}
        }

        /// The next reply, waiting at most `timeout` (or until a signal).
        mutating func reply(timeout: Duration) throws -> [String: Any] {
            let line: [UInt8]
            switch reader.next(until: .now + timeout) {
            case .line(let bytes): line = bytes
            case .timedOut:
                if SignalTrap.fired { throw Interrupted() }
                throw InputFile.ReadError("the host did not answer within \(timeout)")
            case .closed: throw InputFile.ReadError("the host closed the control connection")
            case .tooLong: throw InputFile.ReadError("the host's answer is longer than \(reader.limit) bytes")
            }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
                throw InputFile.ReadError("the host's answer is not JSON")
            }
            if let error = object["error"] as? String { throw InputFile.ReadError(error) }
            return object
        }

        /// A signal arrived while waiting for the host.
        struct Interrupted: Error {}

        /// Tells the host this end is done (it drops what this end asked for, a `host pair`'s PIN)
        /// and waits briefly for it to say so: once this returns, the host has acted on it. Waits
        /// without the signal trap (it is what a signal runs), well within the trap's watchdog.
        func hangUp() {
            _ = Glibc.shutdown(socket.descriptor.rawValue, Int32(SHUT_WR))
            let deadline = MonotonicInstant.now + .milliseconds(500)
            var buffer = [UInt8](repeating: 0, count: 256)
            while MonotonicInstant.now < deadline {
                guard Poll.wait([socket.descriptor], timeout: deadline - .now).first.map({ $0.readable || $0.hungUp }) == true else { return }
                let count = (try? buffer.withUnsafeMutableBytes { try socket.descriptor.read(into: $0) }) ?? 0
                if count <= 0 { return }
            }
        }

        static func ask(_ request: [String: Any]) throws -> [String: Any] {
            var link = try Link()
            try link.send(request)
            return try link.reply(timeout: .seconds(5))
        }
    }

    static func printJSON(_ value: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        // The host's answer carries names peers chose: escaped for the terminal, the same JSON.
        print(PeerName.terminalSafeJSON(String(decoding: data, as: UTF8.self)))
    }

    struct Pair: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pair", abstract: "Show a fresh single-use PIN and wait until a client pairs with it (or it expires).")
        @OptionGroup var logging: LoggingOptions

        func run() throws {
            SignalTrap.install {}
            var link = try Link()
            try link.send(["command": "pair"])
            // The first signal ends this run in order, exit 0 (docs/command-line.md): the host is told
            // first, and the PIN no longer works once this returns.
            var pin = "?"
            do {
                let armed = try link.reply(timeout: .seconds(5))
                pin = armed["pin"] as? String ?? "?"
                let seconds = armed["expires_in_seconds"] as? Int ?? 120
                print("pairing PIN \(pin): run 'padgate pair THIS-HOST --pin \(pin)' on the client (valid \(seconds) s, once)")
                fflush(nil)  // seen at once, also through a pipe
                while true {
                    let outcome = try link.reply(timeout: .seconds(seconds + 5))
                    if let name = outcome["paired"] as? String {
                        print("paired with \(PeerName.escaped(name)) (\(PeerName.escaped(outcome["fingerprint"] as? String ?? "")))")
                        return
                    } else if let next = outcome["pin"] as? String {
                        pin = next
                        print("\(outcome["reason"] as? String ?? "the PIN was replaced"); new pairing PIN \(pin) (the previous one no longer works)")
                        fflush(nil)
                    } else if outcome["replaced"] as? Bool == true {
                        throw InputFile.ReadError("another \(PeerName.escaped(outcome["by"] as? String ?? "'padgate host pair'")) armed a new PIN: PIN \(pin) no longer works")
                    } else if outcome["expired"] as? Bool == true {
                        throw InputFile.ReadError("the PIN expired before a client paired; run 'padgate host pair' again")
                    } else if outcome["cancelled"] as? Bool == true {
                        throw InputFile.ReadError("the host ended this pairing request")
                    }
                }
            } catch is Link.Interrupted {
                link.hangUp()
                TerminalOutput.write("pairing cancelled: PIN \(pin) no longer works\n")
            }
        }
    }

    struct Clients: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clients", abstract: "The paired clients: name, fingerprint, paired at, last seen, connected now, pads.")
        @OptionGroup var logging: LoggingOptions
        @Flag(help: "A JSON array of {name, fingerprint, paired_at, last_seen, connected, pads}.") var json = false

        func run() throws {
            let clients = try Link.ask(["command": "clients"])["clients"] as? [[String: Any]] ?? []
            if json { return try HostCommand.printJSON(clients) }
            if clients.isEmpty { return print("no paired clients: 'padgate host pair' pairs one") }
            for client in clients {
                let connected = client["connected"] as? Bool == true
                let pads = PeerName.escaped((client["pads"] as? [String] ?? []).joined(separator: ", "))
                print("\(PeerName.escaped(client["name"] as? String ?? "?"))  \(PeerName.escaped(client["fingerprint"] as? String ?? ""))")
                print("    paired \(client["paired_at"] as? String ?? "before this was recorded"), last seen \(client["last_seen"] as? String ?? "never"), "
                      + (connected ? "connected now" + (pads.isEmpty ? "" : ": \(pads)") : "not connected"))
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Unpair a client and end its session at once (its pads are removed).")
        @OptionGroup var logging: LoggingOptions
        @Argument(help: "The client's name or fingerprint, as 'padgate host clients' shows it.") var client: String

        func run() throws {
            let done = try Link.ask(["command": "revoke", "client": client])
            let ended = done["sessions_ended"] as? Int ?? 0
            print("revoked \(PeerName.escaped(done["revoked"] as? String ?? client)) (\(PeerName.escaped(done["fingerprint"] as? String ?? "")))" + (ended > 0 ? "; its session was ended and its pads removed" : ""))
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Sessions, pads, datagram counts, refusals and uptime of the running host.")
        @OptionGroup var logging: LoggingOptions
        @Flag(help: "The status as one JSON object.") var json = false

        func run() throws {
            let status = try Link.ask(["command": "status"])
            if json { return try HostCommand.printJSON(status) }
            let sessions = status["sessions"] as? [[String: Any]] ?? []
            print("up \(status["uptime_seconds"] as? Int ?? 0) s, listening on \(status["listening"] as? String ?? "?"), identity \(status["identity"] as? String ?? "?")")
            if status["pairing_pin_armed"] as? Bool == true {
                let by = PeerName.escaped(status["pairing_armed_by"] as? String ?? "?")
                print("pairing: a PIN is armed by \(by)" + ((status["pairing_expires_in_seconds"] as? Int).map { ", for \($0) s more" } ?? ""))
            } else {
                print("pairing: off")
            }
            print("sessions: \(sessions.count)")
            for session in sessions {
                let pads = PeerName.escaped((session["pads"] as? [String] ?? []).joined(separator: ", "))
                // Named by the paired record its certificate matches, never by the name it sent.
                let fingerprint = PeerName.escaped(session["fingerprint"] as? String ?? "?")
                let who = (session["client"] as? String).map { "'\(PeerName.escaped($0))' (\(fingerprint))" }
                    ?? "an unpaired client calling itself '\(PeerName.escaped(session["hello_name"] as? String ?? ""))' (\(fingerprint))"
                print("  \(who) from \(PeerName.escaped(session["address"] as? String ?? "?")): \(pads.isEmpty ? "no pads" : pads); "
                      + "last heard \(session["last_heard_ms"] as? Int ?? 0) ms ago, \(session["datagrams_received"] as? Int ?? 0) datagrams received, "
                      + "\(session["datagrams_rejected"] as? Int ?? 0) rejected, \(session["datagrams_over_budget"] as? Int ?? 0) over its budget")
                if let over = session["over_budget"] as? [String: Int], !over.isEmpty {
                    print("    over budget: " + over.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                }
                if let link = session["link"] as? [String: Any] {
                    func number(_ key: String) -> String { (link[key] as? Double).map { String(format: "%.1f", $0) } ?? "?" }
                    print("    link (as the client measures it): round trip \(number("round_trip_ms")) ms, jitter \(number("jitter_ms")) ms, "
                          + "loss \(number("loss_to_host_percent")) % to the host, \(number("loss_to_client_percent")) % back")
                }
            }
            let refused = status["connections_refused"] as? [String: Int] ?? [:]
            print("connections refused: " + (refused.isEmpty ? "none" : refused.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
        }
    }
}

extension HostCommand.Pair: LoggingCommand {}
extension HostCommand.Clients: LoggingCommand {}
extension HostCommand.Revoke: LoggingCommand {}
extension HostCommand.Status: LoggingCommand {}
