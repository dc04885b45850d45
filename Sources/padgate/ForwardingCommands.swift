import ArgumentParser
import Foundation
import HostDiscovery
import Logging
import MonotonicTime
import PadClient
import PadDevices
import PadFamilies
import PadHost
import PadSystem
import Transport
import WireProtocol

/// HOST, HOST:PORT, [IPV6]:PORT or a bare IPv6 address (`fe80::1%eth0`): `HostAndPort` reads it.
struct HostAddress: ExpressibleByArgument, CustomStringConvertible {
    var parsed: HostAndPort
    var host: String { parsed.host }
    var port: UInt16 { parsed.port }
    init?(argument: String) {
        // Anything else, a space or bytes that were not UTF-8, can never resolve: refused here
        // rather than retried forever.
        guard let parsed = HostAndPort(argument, defaultPort: ServeCommand.defaultPort) else { return nil }
        self.parsed = parsed
    }
    var description: String { parsed.description }
}

enum VirtualChoice: String, ExpressibleByArgument, CaseIterable {
    /// One line for a wrong kind (the parser's own message lists every value on a line of its own).
    static func parse(_ text: String) throws -> VirtualChoice {
        guard let choice = VirtualChoice(rawValue: text) else {
            throw ValidationError("the kinds are \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    case auto, dualsense
    /// Every pad as a USB DualSense (its audio function: haptics for pads without voice coils too).
    case dualsenseUSB = "dualsense-usb"
    case xbox
    /// auto, with a DualSense or Edge always a USB device on vhci-hcd (an error where it cannot be).
    case usb
    /// auto, with every pad through uhid (no USB device).
    case uhid
    /// Not a device at all: the virtual pad lives in the server process and prints its state.
    case inProcess = "in-process"

    /// As the drivers take it; nil for the in-process pad.
    var presentation: HostPresentation? { HostPresentation(rawValue: rawValue) }
}

struct ServeCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let defaultPort = PadServer.defaultPort
    /// Members of this group may manage a running host through its control socket.
    static let adminGroup = "padgate"
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Host forwarded pads: each becomes a virtual pad games see, and their feedback goes back.",
        discussion: """
            Listens on TCP (TLS 1.3 control) and UDP (sealed input and feedback) on the same port, and \
            accepts only clients paired with this host: start it with --pair once, and run \
            'padgate pair THIS-HOST' on the client with the PIN it shows. Every limit below protects the \
            host from peers on the network (docs/security.md). Virtual pads need /dev/uhid (DualSense) \
            or /dev/uinput (Xbox 360-style): sudo modprobe uhid uinput, and udev/70-padgate.rules.
            """)

    @Option(parsing: .unconditional, help: "Port for TCP and UDP.") var port: UInt16 = ServeCommand.defaultPort
    @Option(help: "Address to listen on, IPv6 or IPv4 (the default '::' is both; 127.0.0.1 or ::1: this machine only).")
    var address = PadServer.everyAddress
    @Flag(help: "Do not announce this host on the LAN (DNS-SD through avahi-daemon).") var noAnnounce = false
    @Option(help: ArgumentHelp("Virtual pad kind: auto (each pad as its own family: a DualSense or Edge as a USB device on vhci-hcd where it can be, else through uhid like DualShock 4, Xbox One over Bluetooth and Switch Pro; without uhid an Xbox 360 pad), usb (auto, DualSense and Edge always as USB devices), uhid (auto without USB devices), dualsense (every pad as a DualSense), dualsense-usb (every pad as a USB DualSense: a game's haptics then reach any pad, as rumble where it has no voice coils), xbox (every pad as an Xbox 360 pad, uinput).",
                               valueName: "kind"), completion: .list(VirtualChoice.allCases.map(\.rawValue)), transform: VirtualChoice.parse)
    var virtual: VirtualChoice = .auto
    @Option(name: .customLong("show"), help: ArgumentHelp("A pad kind shown other than its own way (auto, usb, uhid): \(HostStyleChoices.described.joined(separator: "; ")). Repeatable.",
                                                          valueName: "kind=style"))
    var shows: [String] = []
    @Option(parsing: .unconditional, help: "Most pads per client (1-\(PadServer.Limits.maxPadsPerClientRange.upperBound)).") var maxPads = PadServer.Limits().maxPadsPerClient
    @Option(parsing: .unconditional, help: "Most clients with a session at once.") var maxClients = PadServer.Limits().maxClients
    @Option(parsing: .unconditional, help: "Most connections still in their handshake at once (at most 4 from one address).")
    var maxPending = PadServer.Limits().maxPendingConnections
    @Option(parsing: .unconditional, help: "Seconds a stalled client's pad (every control released) stays before it is unplugged (at least 10).",
            transform: SecondsOption.parse)
    var padGrace: Double = Double(ClientPads.minimumPadGrace.components.seconds)
    @Flag(help: "Show a PIN and accept pairing requests (single-use PINs that expire after 2 minutes).") var pair = false
    @Flag(help: "Accept clients that never paired: anyone who can reach the port can then type on this machine's virtual pads. Only for a trusted network.")
    var acceptUnpairedClients = false
    @Flag(help: .hidden) var requirePairing = false  // the default now; kept so old scripts still start
    @Option(parsing: .unconditional, help: "Stop after this many seconds.", transform: SecondsOption.parse) var duration: Double?

    func validate() throws {
        guard PadServer.Limits.maxPadsPerClientRange.contains(maxPads) else {
            throw ValidationError("--max-pads must be within \(PadServer.Limits.maxPadsPerClientRange.lowerBound)-\(PadServer.Limits.maxPadsPerClientRange.upperBound)")
        }
        guard (1...1024).contains(maxClients) else { throw ValidationError("--max-clients must be within 1-1024") }
        guard (1...1024).contains(maxPending) else { throw ValidationError("--max-pending must be within 1-1024") }
        guard padGrace.isFinite, padGrace >= Double(ClientPads.minimumPadGrace.components.seconds), padGrace <= 3600 else {
            throw ValidationError("--pad-grace must be within \(ClientPads.minimumPadGrace.components.seconds)-3600 seconds")
        }
        if requirePairing && acceptUnpairedClients { throw ValidationError("--require-pairing and --accept-unpaired-clients contradict each other") }
        do { _ = try parsedStyles() } catch { throw ValidationError("--show: \(error)") }
        if !shows.isEmpty && ![.auto, .usb, .uhid].contains(virtual) {
            throw ValidationError("--show applies to --virtual auto, usb or uhid (each pad as its own family), not \(virtual.rawValue)")
        }
    }

    func parsedStyles() throws(HostStyleError) -> HostStyleChoices {
        var styles = HostStyleChoices()
        for show in shows { try styles.add(show) }
        return styles
    }

    func run() throws {
        SignalTrap.install {}  // first: a signal during start-up ends the command in order, not by default death
        let state = PadgatePaths.stateDirectory
        // One host per runtime directory, decided before anything is bound or announced: a second
        // one refuses rather than take the control socket over.
        let runtime = try PadgatePaths.checkedRuntimeDirectory()
        var claim: RuntimeDirectoryClaim?
        do {
            claim = try RuntimeDirectoryClaim(directory: runtime)
        } catch .held(let directory, let pid) {
            throw InputFile.ReadError(RuntimeDirectoryClaim.Failure.held(directory: directory, pid: pid).description)
        } catch {
            commandLog.warning("no control socket in \(runtime.path) (\(error)): 'padgate host' cannot reach this host; set PADGATE_RUNTIME_DIR to a writable directory")
        }
        let identity = try TLSIdentity(directory: state.appendingPathComponent("host"), commonName: "padgate host")
        let paired = try FingerprintStore(url: state.appendingPathComponent("paired-clients"))
        if !paired.unreadableLines.isEmpty {
            commandLog.info("ignoring unreadable lines \(paired.unreadableLines.map(String.init).joined(separator: ", ")) of \(paired.url.path)")
        }
        var configuration = PadServer.Configuration()
        configuration.address = address
        configuration.port = port
        configuration.limits.maxPadsPerClient = maxPads
        configuration.limits.maxClients = maxClients
        configuration.limits.maxPendingConnections = maxPending
        configuration.limits.maxPendingPerAddress = min(configuration.limits.maxPendingPerAddress, maxPending)
        configuration.padGrace = .milliseconds(Int(padGrace * 1000))
        configuration.acceptUnpairedClients = acceptUnpairedClients
        let server = try PadServer(configuration: configuration, identity: identity, pairedClients: paired,
                                   makePad: Self.factory(virtual, styles: try parsedStyles()))
        // Ready means ready: every listener accepts before "listening on" is said and systemd is
        // told READY=1 (the network port above, then the control socket, then the LAN
        // announcement), so a script that runs `padgate host pair` the moment it is told is never
        // refused. The first PIN is shown after that line too: a client may use it at once.
        var administration: HostAdministration?
        do {
            if let claim {
                administration = try HostAdministration(server: server, claim: claim,
                                                        access: .init(uid: ProcessIdentity.userID, adminGroup: ProcessIdentity.group(named: Self.adminGroup)),
                                                        activityFile: state.appendingPathComponent("client-activity"))
                administration?.start()
            }
        } catch {
            commandLog.warning("no control socket in \(runtime.path) (\(error)): 'padgate host' cannot reach this host; set PADGATE_RUNTIME_DIR to a writable directory")
        }
        let firstPIN = LockedBox<String?>(nil)
        if pair {
            server.enablePairing { pin, why in
                switch why {
                case .first: firstPIN.update { $0 = pin }
                case .used: commandLog.info("the PIN was used; next pairing PIN \(pin)")
                case .expired: commandLog.info("the PIN expired; new pairing PIN \(pin)")
                case .tooManyFailures: commandLog.info("too many wrong PINs; new pairing PIN \(pin)")
                case .resumed: commandLog.info("pairing PIN \(pin) (serve --pair again; valid 2 minutes, once)")
                }
            }
        }
        let announcer = noAnnounce || Self.isLoopbackOnly(address) ? nil : Self.announce(server, identity: identity)
        defer { announcer?.stop() }
        if let announcer {
            // In slices, so that a signal meanwhile ends the command within its stop limit.
            let giveUp = MonotonicInstant.now + AvahiAnnouncer.settleLimit
            while !announcer.waitUntilSettled(timeout: .milliseconds(50)) && !SignalTrap.fired {
                if MonotonicInstant.now >= giveUp {
                    commandLog.notice("the LAN announcement is still pending after \(AvahiAnnouncer.settleLimit); serving by address meanwhile")
                    break
                }
            }
        }
        let listening = server.listeningAddress.map { "\($0)" } ?? HostAndPort(host: address, port: server.port).description
        let bothFamilies = address == PadServer.everyAddress && server.listeningAddress?.family == .ipv6
        commandLog.info("listening on \(listening)\(bothFamilies ? " (IPv6 and IPv4)" : ""); identity \(identity.fingerprint)")
        if acceptUnpairedClients {
            commandLog.info("accepting unpaired clients: anyone who can reach \(listening) can drive this machine's virtual pads")
        } else if paired.entries.isEmpty && !pair {
            commandLog.info("no client is paired yet: restart with --pair to pair one")
        }
        if let pin = firstPIN.value {
            commandLog.info("pairing PIN \(pin) (run 'padgate pair THIS-HOST' on the client; valid 2 minutes, once)")
        }
        let deadline = duration.map { MonotonicInstant.now + SecondsOption.duration($0) }
        // Under systemd (Type=notify): ready once every listener accepts, and the input loop feeds the watchdog.
        let service = ServiceManager.shared
        server.heartbeat = { service.watchdogIfDue() }
        service.notify("READY=1\nSTATUS=listening on \(address) port \(server.port)")
        server.run { SignalTrap.fired || deadline.map { MonotonicInstant.now >= $0 } ?? false }
        service.notify("STOPPING=1")
        administration?.stop()
    }

    /// Publishes this host on the LAN (DNS-SD, through avahi-daemon): its port, identity and
    /// whether a PIN is armed, updated as that changes. Without a daemon it says so once and serves.
    static func announce(_ server: PadServer, identity: TLSIdentity) -> AvahiAnnouncer? {
        let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "padgate"
        let advert = { (armed: Bool) in
            HostAdvert(protocolVersion: Int(ControlMessage.protocolVersion), fingerprint: identity.fingerprint, pairingOpen: armed, hostName: name)
        }
        guard let announcer = AvahiAnnouncer(instanceName: "padgate on \(name)", port: server.port, advert: advert(server.pairing != nil)) else { return nil }
        server.onPairingChanged = { armed in announcer.update(advert(armed)) }
        announcer.start()
        return announcer
    }

    /// Nobody else could reach a host on these, so there is nothing to announce.
    static func isLoopbackOnly(_ address: String) -> Bool { address.hasPrefix("127.") || address == "::1" }

    /// The pad games see for each arrival: in this process (`--virtual in-process`), else as its
    /// family's driver shows it (`PadDrivers.hostPad`, which logs and shows any fallback).
    static func factory(_ choice: VirtualChoice, styles: HostStyleChoices) -> VirtualPadFactory {
        guard let presentation = choice.presentation else { return { PrintingPad(arrival: $0) } }
        return { try PadDrivers.hostPad(for: $0, presentation: presentation, styles: styles) }
    }
}

/// The in-process stand-in, printing what a game would see.
final class PrintingPad: VirtualPad {
    var presentation: String { "in-process" }
    let inner: InProcessPad
    var arrival: PadArrival { inner.arrival }
    init(arrival: PadArrival) {
        inner = InProcessPad(arrival: arrival)
        console.info("host: virtual pad for \(PeerName(local: arrival.name)) in slot \(arrival.slot.rawValue) (in-process stand-in)")
    }
    func apply(_ state: PadStateSnapshot) throws {
        try inner.apply(state)
        let names = GamepadButtonsNames.names(state.buttons)
        console.info("host: slot \(state.slot.rawValue) buttons [\(names)] left (\(state.leftX),\(state.leftY)) right (\(state.rightX),\(state.rightY)) l2 \(state.l2) r2 \(state.r2)")
    }
    func apply(_ touch: TouchSnapshot) throws {
        if touch != inner.touch, touch.first.active || touch.second.active {
            console.info("host: slot \(touch.slot.rawValue) touch (\(touch.first.x),\(touch.first.y))\(touch.second.active ? " (\(touch.second.x),\(touch.second.y))" : "")")
        }
        try inner.apply(touch)
    }
    func apply(_ motion: MotionBatch) throws { try inner.apply(motion) }
    var feedbackDescriptors: [FileDescriptor] { [] }
    func takeFeedback(into messages: inout [WireMessage]) throws { try inner.takeFeedback(into: &messages) }
    func remove() { inner.remove(); console.info("host: virtual pad in slot \(arrival.slot.rawValue) removed (all controls released)") }
}

import HIDCodecs
enum GamepadButtonsNames {
    static func names(_ raw: UInt32) -> String { GamepadButtons(rawValue: raw).names.joined(separator: " ") }
}

struct ForwardCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "forward",
        abstract: "Forward this machine's pads to a host running 'padgate serve'.",
        discussion: """
            Pads plugged in later are forwarded too (--all, the default), or only those matching --pad. \
            The host's identity is pinned on first use (~/.config/padgate/known_hosts); a changed one is \
            refused. Feedback from the host's games plays on the physical pads; if the link dies, the \
            motors stop and padgate reconnects.
            """)

    @Argument(help: "HOST, HOST:PORT or [IPV6]:PORT of 'padgate serve'; without it, the one paired host announcing itself on the LAN.")
    var host: HostAddress?
    @Option(help: "Forward only this pad: index, /dev node, or vid:pid; again for more pads.") var pad: [String] = []
    @Flag(help: "Forward every pad, including ones plugged in later (the default without --pad).") var all = false
    @Option(parsing: .unconditional, help: "Stop after this many seconds.", transform: SecondsOption.parse) var duration: Double?
    @Flag(help: "No live status line.") var quiet = false
    @Flag(help: "Read every pad through evdev, even the DualSense, DualSense Edge, DualShock 4 and Xbox over Bluetooth pads padgate would read from hidraw (their raw reports: paddles, battery, the pad's own calibration; the Xbox's buttons as its descriptor names them).")
    var evdev = false
    @Option(name: .customLong("gyro-calibration"),
            help: "continuous (the default: the gyro's bias re-measured whenever the pad rests, starting from what 'padgate calibrate' stored), stored (only the stored bias) or off (docs/calibration.md).")
    var gyroCalibration: GyroCalibrationMode = .continuous
    @Flag(help: "Offer the pads' microphones to the host: a USB DualSense's is then the host pad's, recorded while, and only while, a program on the host records from it; forward says when it starts and stops (docs/audio.md).")
    var microphone = false
    @Flag(help: "Leave the pads' evdev nodes to this machine's programs too, as without padgate (by default forward holds them while it forwards a pad, so its touchpad moves no pointer here and its buttons reach no program here; docs/desk.md).")
    var shared = false

    var feedbackOptions: PadFeedback.Options {
        var options = PadFeedback.Options()
        options.offersMicrophone = microphone
        return options
    }

    func validate() throws {
        if all && !pad.isEmpty { throw ValidationError("use --pad or --all, not both") }
    }

    func run() throws {
        let state = PadgatePaths.stateDirectory
        SignalTrap.install {}  // first: a signal during start-up ends the command in order, not by default death
        let identity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "padgate client")
        let knownHosts = try KnownHostStore(url: PadgatePaths.knownHostsFile)
        let target = try Discovery.target(host, for: .forward, identity: identity)
        let configuration = target.forwarding
        let forwarder = PadForwarder(configuration: configuration, identity: identity, knownHosts: knownHosts)
        let monitor = try PadMonitor()
        let selectors = try pad.map(PadSelector.init)
        // Hot-plug on a thread of its own: opening a pad (and reading its calibration) can wait on
        // the kernel, and the forwarding loop must not (a stall there would expire the host's lease).
        let plugging = HotPlugFeeder(policy: HotPlugPolicy(selectors: selectors, preferHidraw: !evdev), forwarder: forwarder,
                                     open: HotPlugFeeder.opener(gyroCalibration: gyroCalibration, options: feedbackOptions, exclusive: !shared))
        if !shared {
            plugging.namesHidrawReaders = true
            console.info("forwarded pads answer the host alone: their evdev nodes are held while forwarded (--shared leaves them to this machine too); their hidraw nodes cannot be held, so a program here that reads those (Steam, a game through SDL's HIDAPI drivers, a browser's WebHID) still sees a pad: close it (docs/desk.md)")
        }
        let pluggingThread = JoinableThread { plugging.run(monitor: monitor) }
        defer { plugging.stop(); pluggingThread.join() }
        if !quiet {
            var last = MonotonicInstant.now
            forwarder.onStatus = { status in
                guard MonotonicInstant.now - last > .milliseconds(500) else { return }
                last = .now
                let link = status.link
                let rtt = link.roundTripMicros == 0 ? "-" : LinkReport.milliseconds(.microseconds(Int64(link.roundTripMicros)))
                let loss = "\(LinkReport.percent(Double(link.lossToHostPermille) / 1000))/\(LinkReport.percent(Double(link.lossToClientPermille) / 1000))"
                let line = "pads \(status.pads)  rtt \(rtt)  jitter \(LinkReport.milliseconds(.microseconds(Int64(link.jitterMicros))))  loss \(loss)  sent \(status.sent)  received \(status.received)  dropped \(status.rejected)  feedback \(status.lastFeedback.isEmpty ? "-" : status.lastFeedback)"
                TerminalOutput.write((standardErrorIsTerminal ? "\r\u{1b}[K" + line : line + "\n"))
            }
        }
        let deadline = duration.map { MonotonicInstant.now + SecondsOption.duration($0) }
        forwarder.run { SignalTrap.fired || deadline.map { MonotonicInstant.now >= $0 } ?? false }
        if !quiet && standardErrorIsTerminal { TerminalOutput.write("\n") }
    }
}

var standardErrorIsTerminal: Bool { TerminalOutput.isTerminal }

struct PairCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a host using the PIN 'padgate serve --pair' shows.",
        discussion: "Pairing proves both ends know the PIN without revealing it (SPAKE2), pins the host's identity, and lets the host accept this machine (hosts accept only paired clients).")

    @Argument(help: "HOST, HOST:PORT or [IPV6]:PORT of 'padgate serve --pair'; without it, the one host on the LAN with a PIN armed.")
    var host: HostAddress?
    @Option(help: "The PIN (asked for if omitted).") var pin: String?

    func run() throws {
        let state = PadgatePaths.stateDirectory
        let identity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "padgate client")
        let target = try Discovery.target(host, for: .pair, identity: identity)
        var pin = self.pin
        if pin == nil {
            TerminalOutput.write("PIN shown by the host: ")
            pin = readLine()?.trimmingCharacters(in: .whitespaces)
        }
        guard let pin, pin.count == 6, pin.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { throw ValidationError("the PIN is the 6 digits 'padgate serve --pair' shows") }
        // A first connection learns the host's identity; the PIN is stretched with none open (the
        // host's first-frame deadline would otherwise count the scrypt); the second one pairs.
        let retried: (Int) -> Void = { commandLog.notice("the host left the connection unanswered (a slow or lossy link?); connecting again (\($0) of \(Pairing.connectionsPerStep))") }
        let hostFingerprint: String = try Pairing.againIfUnanswered(onRetry: retried) {
            let probe = try target.connect(identity: identity, within: Pairing.connectWindow)
            guard let fingerprint = probe.peerFingerprint else { throw PairingError.protocolError("the host sent no certificate") }
            return fingerprint
        }
        let stretched = try Pairing.stretch(pin: pin, clientFingerprint: identity.fingerprint, hostFingerprint: hostFingerprint)
        let connection = try Pairing.againIfUnanswered(onRetry: retried) {
            let connection = try target.connect(identity: identity, within: Pairing.connectWindow)
            try Pairing.pairAsClient(connection, clientIdentity: identity, stretchedPIN: stretched, clientName: PeerName(local: ProcessInfo.processInfo.hostName))
            return connection
        }
        // The PIN authenticated this host's certificate: pin it, replacing any older entry.
        var knownHosts = try KnownHostStore(url: PadgatePaths.knownHostsFile)
        try knownHosts.pin(fingerprint: connection.peerFingerprint ?? "", name: target.announcedName ?? target.host, address: target.typedAddress)
        print("paired with \(target.display) (\(connection.peerFingerprint ?? ""))")
    }
}
