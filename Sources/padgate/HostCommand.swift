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
        func send(_ request: HostControl.Request) throws {
            _ = Signals.ignoreBrokenPipes
            var data = try HostControl.encode(request)
            data.append(0x0a)
            do { try data.withUnsafeBytes { try socket.descriptor.writeAll($0) } } catch let error as SystemCallError where error.errno == .brokenPipe {}
        }

        /// The next reply, waiting at most `timeout` (or until a signal): the host's error if it
        /// sent one, else a `T`, or an error that says what the answer lacks.
        mutating func reply<T: Decodable>(_ type: T.Type, timeout: Duration) throws -> T {
            let line: [UInt8]
            switch reader.next(until: .now + timeout) {
            case .line(let bytes): line = bytes
            case .timedOut:
                if SignalTrap.fired { throw Interrupted() }
                throw InputFile.ReadError("the host did not answer within \(timeout)")
            case .closed: throw InputFile.ReadError("the host closed the control connection")
            case .tooLong: throw InputFile.ReadError("the host's answer is longer than \(reader.limit) bytes")
            }
            if let failure = try? HostControl.decode(HostControl.Failure.self, from: Data(line)) { throw InputFile.ReadError(failure.error) }
            do { return try HostControl.decode(type, from: Data(line)) } catch {
                throw InputFile.ReadError("the host's answer is not what this padgate expects: \(HostControl.explain(error)) (are the host and this padgate the same version?)")
            }
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

        static func ask<T: Decodable>(_ request: HostControl.Request, _ type: T.Type) throws -> T {
            var link = try Link()
            try link.send(request)
            return try link.reply(type, timeout: .seconds(5))
        }
    }

    static func printJSON(_ value: some Encodable) throws {
        let data = try HostControl.encodePretty(value)
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
            try link.send(.pair)
            // The first signal ends this run in order, exit 0 (docs/command-line.md): the host is told
            // first, and the PIN no longer works once this returns.
            var pin = "?"
            do {
                guard case .armed(let armed, let seconds) = try link.reply(HostControl.PairReply.self, timeout: .seconds(5)) else {
                    throw InputFile.ReadError("the host did not arm a PIN")
                }
                pin = armed
                print("pairing PIN \(pin): run 'padgate pair THIS-HOST --pin \(pin)' on the client (valid \(seconds) s, once)")
                fflush(nil)  // seen at once, also through a pipe
                while true {
                    switch try link.reply(HostControl.PairReply.self, timeout: .seconds(seconds + 5)) {
                    case .paired(let name, let fingerprint):
                        print("paired with \(PeerName.escaped(name)) (\(PeerName.escaped(fingerprint)))")
                        return
                    case .newPIN(let next, let reason):
                        pin = next
                        print("\(PeerName.escaped(reason)); new pairing PIN \(pin) (the previous one no longer works)")
                        fflush(nil)
                    case .armed(let next, _):
                        pin = next
                        print("the PIN was replaced; new pairing PIN \(pin) (the previous one no longer works)")
                        fflush(nil)
                    case .replaced(let by):
                        throw InputFile.ReadError("another \(PeerName.escaped(by)) armed a new PIN: PIN \(pin) no longer works")
                    case .expired:
                        throw InputFile.ReadError("the PIN expired before a client paired; run 'padgate host pair' again")
                    case .cancelled:
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
            let clients = try Link.ask(.clients, HostControl.Clients.self).clients
            if json { return try HostCommand.printJSON(clients) }
            if clients.isEmpty { return print("no paired clients: 'padgate host pair' pairs one") }
            for client in clients {
                let pads = PeerName.escaped(client.pads.joined(separator: ", "))
                print("\(PeerName.escaped(client.name))  \(PeerName.escaped(client.fingerprint))")
                print("    paired \(PeerName.escaped(client.pairedAt ?? "before this was recorded")), last seen \(PeerName.escaped(client.lastSeen ?? "never")), "
                      + (client.connected ? "connected now" + (pads.isEmpty ? "" : ": \(pads)") : "not connected"))
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Unpair a client and end its session at once (its pads are removed).")
        @OptionGroup var logging: LoggingOptions
        @Argument(help: "The client's name or fingerprint, as 'padgate host clients' shows it.") var client: String

        func run() throws {
            let done = try Link.ask(.revoke(client: client), HostControl.Revoked.self)
            print("revoked \(PeerName.escaped(done.revoked)) (\(PeerName.escaped(done.fingerprint)))" + (done.sessionsEnded > 0 ? "; its session was ended and its pads removed" : ""))
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Sessions, pads, datagram counts, refusals and uptime of the running host.")
        @OptionGroup var logging: LoggingOptions
        @Flag(help: "The status as one JSON object.") var json = false

        func run() throws {
            let status = try Link.ask(.status, HostControl.Status.self)
            if json { return try HostCommand.printJSON(status) }
            print("up \(status.uptimeSeconds) s, listening on \(PeerName.escaped(status.listening)), identity \(PeerName.escaped(status.identity))")
            if status.pairingPINArmed {
                let by = PeerName.escaped(status.pairingArmedBy ?? "?")
                print("pairing: a PIN is armed by \(by)" + (status.pairingExpiresInSeconds.map { ", for \($0) s more" } ?? ""))
            } else {
                print("pairing: off")
            }
            print("sessions: \(status.sessions.count)")
            for session in status.sessions {
                let pads = PeerName.escaped(session.pads.joined(separator: ", "))
                // Named by the paired record its certificate matches, never by the name it sent.
                let fingerprint = PeerName.escaped(session.fingerprint)
                let who = session.client.map { "'\(PeerName.escaped($0))' (\(fingerprint))" }
                    ?? "an unpaired client calling itself '\(PeerName.escaped(session.helloName))' (\(fingerprint))"
                print("  \(who) from \(PeerName.escaped(session.address)): \(pads.isEmpty ? "no pads" : pads); "
                      + "last heard \(session.lastHeardMilliseconds) ms ago, \(session.datagramsReceived) datagrams received, "
                      + "\(session.datagramsRejected) rejected, \(session.datagramsOverBudget) over its budget")
                if !session.overBudget.isEmpty {
                    print("    over budget: " + session.overBudget.sorted { $0.key < $1.key }.map { "\(PeerName.escaped($0.key)) \($0.value)" }.joined(separator: ", "))
                }
                if let link = session.link {
                    func number(_ value: Double) -> String { String(format: "%.1f", value) }
                    print("    link (as the client measures it): round trip \(number(link.roundTripMilliseconds)) ms, jitter \(number(link.jitterMilliseconds)) ms, "
                          + "loss \(number(link.lossToHostPercent)) % to the host, \(number(link.lossToClientPercent)) % back")
                }
            }
            if !status.players.isEmpty {
                print("players:")
                for player in status.players {
                    let fingerprint = PeerName.escaped(player.fingerprint)
                    let who = player.client.map { "'\(PeerName.escaped($0))'" } ?? "an unpaired client (\(fingerprint))"
                    if let pad = player.pad {
                        print("  \(player.player): \(PeerName.escaped(pad)) of \(who)")
                    } else {
                        print("  \(player.player): held for a pad of \(who), gone \(player.absentSeconds ?? 0) s")
                    }
                }
            }
            let refused = status.connectionsRefused
            print("connections refused: " + (refused.isEmpty ? "none" : refused.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
        }
    }
}

extension HostCommand.Pair: LoggingCommand {}
extension HostCommand.Clients: LoggingCommand {}
extension HostCommand.Revoke: LoggingCommand {}
extension HostCommand.Status: LoggingCommand {}
