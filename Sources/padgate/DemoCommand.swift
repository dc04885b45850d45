import ArgumentParser
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadClient
import PadDevices
import PadFamilies
import PadHost
import PadSystem
import Transport
import WireProtocol

/// `padgate demo`: the whole forwarding path on one machine. A scripted DualSense is forwarded to
/// a host on loopback, over the real link (TLS 1.3 control, AES-GCM datagrams over UDP); a "game"
/// on the host plays lights, rumble and trigger effects back to the pad. Where /dev/uhid can be
/// written, both pads are real kernel devices (hid-playstation); otherwise both are in-process
/// stand-ins and everything between them is still real.
struct DemoCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Forward a scripted DualSense to a host on this machine and show both ends live.",
        discussion: """
            Runs 'padgate serve' and 'padgate forward' in one process on 127.0.0.1, with throw-away \
            identities. With a writable /dev/uhid the pad and the host's virtual pad are real kernel \
            devices; without, in-process stand-ins take their place (the codecs, snapshot diff, wire \
            format, TLS, AES-GCM and UDP are the same either way).
            """)

    enum Devices: String, ExpressibleByArgument, CaseIterable {
        case auto, kernel
        case inProcess = "in-process"
    }

    @Option(parsing: .unconditional, help: "Seconds to run once the host's virtual pad is up.", transform: SecondsOption.parse) var duration: Double = 15
    /// How long both ends may take to come up before the demo gives up waiting.
    static let setupLimit: Duration = .seconds(30)
    @Option(help: "auto (kernel devices when /dev/uhid is writable), kernel, or in-process.") var devices: Devices = .auto
    @Option(help: "An input script for the pad (see docs/emulate-script.md); the default tours every control.") var script: String?
    @Flag(help: "Print the default input script and exit.") var printScript = false

    func validate() throws {
        guard duration.isFinite, duration > 0, duration <= 86_400 else { throw ValidationError("--duration is seconds, more than 0 and at most a day") }
    }

    func run() throws {
        if printScript { print(DemoScripts.pad, terminator: ""); return }
        let input = try InputScript(parsing: script.map { try InputFile.text($0, what: "--script") } ?? DemoScripts.pad)
        let useKernel: Bool
        switch devices {
        case .kernel: useKernel = true
        case .inProcess: useKernel = false
        case .auto:
            useKernel = access(UHIDDevice.path, W_OK) == 0
            if !useKernel {
                commandLog.info("\(UHIDDevice.path) is not writable here (no uhid module, or no udev rule), so the physical pad and the host's virtual pad are in-process stand-ins. The link between them is real: codecs, snapshot diff, wire format, TLS 1.3, AES-GCM, UDP.")
            }
        }

        SignalTrap.install {}
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-demo-\(ProcessInfo.processInfo.processIdentifier)")
        defer { try? FileManager.default.removeItem(at: state) }
        let hostIdentity = try TLSIdentity(directory: state.appendingPathComponent("host"), commonName: "padgate demo host")
        let clientIdentity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "padgate demo client")

        let ends = try useKernel ? DemoEnds.kernel(script: input) : DemoEnds.inProcess(script: input)
        defer { ends.silence(); ends.teardown() }
        var configuration = PadServer.Configuration()
        configuration.address = "127.0.0.1"
        configuration.port = 0
        // The demo pairs itself: both identities are its own, so the host knows the client's at once.
        var paired = try FingerprintStore(url: state.appendingPathComponent("paired-clients"))
        try paired.remember("demo client", fingerprint: clientIdentity.fingerprint)
        let server = try PadServer(configuration: configuration, identity: hostIdentity,
                                   pairedClients: paired,
                                   makePad: ends.makeHostPad)
        var clientConfiguration = PadForwarder.Configuration(host: "127.0.0.1")
        clientConfiguration.port = server.port
        clientConfiguration.clientName = "demo client"
        let forwarder = PadForwarder(configuration: clientConfiguration, identity: clientIdentity,
                                     knownHosts: try KnownHostStore(url: state.appendingPathComponent("known_hosts")))
        forwarder.add(ends.source)
        commandLog.info("host on 127.0.0.1:\(server.port), \(useKernel ? "kernel devices (uhid, hid-playstation)" : "in-process stand-ins"), \(Int(duration)) s")

        // The demo's time starts when the host's virtual pad is up: setting up kernel devices takes
        // a while on a loaded machine, and none of it should eat into the tour.
        let length = SecondsOption.duration(duration)
        let deadline = LockedBox(MonotonicInstant.now + Self.setupLimit + length)
        let stop: @Sendable () -> Bool = { SignalTrap.fired || MonotonicInstant.now >= deadline.value }
        let serverThread = JoinableThread { server.run(tick: .milliseconds(100), until: stop) }
        let gameWrite = ends.gameWrite, hostView = ends.hostView
        let game = JoinableThread {
            DemoGame.play(until: { deadline.value }, write: gameWrite, padUp: { deadline.update { $0 = .now + length } })
        }

        // The forwarding loop only copies what the view shows, every 100 ms; looking at the host's
        // pad (udev, evdev) happens on the view's own thread, so a slow look never delays a report.
        let frame = LockedBox<DemoView.Frame?>(nil)
        var lastCapture = MonotonicInstant.now - .seconds(1)
        forwarder.onStatus = { status in
            let now = MonotonicInstant.now
            guard now - lastCapture >= DemoView.interval else { return }
            lastCapture = now
            frame.update { $0 = DemoView.Frame(pad: ends.source.controls, touch: ends.source.touch, feedback: ends.padFeedback(), status: status) }
        }
        let hostUpdates = LockedBox(0)
        let viewThread = JoinableThread {
            var view = DemoView()
            while !stop() {
                SignalTrap.sleep(DemoView.interval)
                if !stop(), let current = frame.value { view.draw(current, host: hostView) }
            }
            view.finish()
            hostUpdates.update { $0 = view.hostUpdates }
        }
        forwarder.run(until: stop)
        ends.silence()
        // The pad side goes while the host removes its own pad: two kernel removals at once, not
        // one after the other (each takes a while on a slow or emulated machine).
        let padSide = JoinableThread(ends.teardown)
        viewThread.join()
        serverThread.join()
        game.join()
        padSide.join()
        print("padgate demo: \(forwarder.status.sent) datagrams sent, \(forwarder.status.received) received, \(forwarder.status.rejected) rejected; \(hostUpdates.value) host updates shown")
    }
}

/// The two devices of the demo and how to reach them: real kernel devices or in-process stand-ins.
struct DemoEnds {
    var source: PadSource
    var makeHostPad: VirtualPadFactory
    /// The host's virtual pad as a game sees it (one line); asked on the view's thread.
    var hostView: @Sendable () -> String
    /// What the physical pad was last told to show (rumble, lights, triggers).
    var padFeedback: () -> DualSenseOutputState
    /// The game writes a DualSense output report to the host's virtual pad (false: no pad yet);
    /// on the game's thread.
    var gameWrite: @Sendable ([UInt8]) -> Bool
    /// Quiets the physical pad (motors, lights) once forwarding stopped.
    var silence: () -> Void
    /// Unplugs the pad side; on a thread of its own while the host removes its pad.
    var teardown: @Sendable () -> Void

    static func inProcess(script: InputScript) throws -> DemoEnds {
        let source = try ScriptedPadSource(script: script, slot: PadSlot(0))
        let hostPads = LockedBox<[InProcessPad]>([])
        return DemoEnds(
            source: source,
            makeHostPad: { arrival in
                let pad = InProcessPad(arrival: arrival)
                // Pads the host replaced or removed are let go (and their descriptors with them).
                hostPads.update { $0.removeAll { $0.removed }; $0.append(pad) }
                return pad
            },
            hostView: {
                guard let pad = hostPads.value.last(where: { !$0.removed }) else { return "(no virtual pad yet)" }
                return DemoView.describe(pad.state, pad.touch)
            },
            padFeedback: { source.shown },
            gameWrite: { report in
                guard let pad = hostPads.value.last(where: { !$0.removed }) else { return false }
                pad.gameWrites(report)
                return true
            },
            silence: {},
            teardown: {})
    }

    static func kernel(script: InputScript) throws -> DemoEnds {
        let physical = try EmulatedPlayStationPad(bus: .usb)
        let feeder = InputFeeder(pad: physical, source: .script(script))
        let feeding = LockedBox(true)
        let feederThread = JoinableThread { try? feeder.run(until: nil) { !feeding.value } }
        // From here a failure removes the pad it made before it says why.
        @Sendable func abandon() {
            feeding.update { $0 = false }
            feederThread.join()
            physical.stop()
        }
        let monitor: PadMonitor
        do { monitor = try PadMonitor() } catch { abandon(); throw error }
        let udev = monitor.udev
        // In short steps, so that a signal during set-up is seen at once.
        let appeared = MonotonicInstant.now + .seconds(10)
        var found: Pad?
        while found == nil, !SignalTrap.fired, MonotonicInstant.now < appeared {
            found = monitor.waitForPad(timeout: .milliseconds(100)) { $0.uniq == physical.uniq && $0.hasItsInputNodes && $0.hidraw != nil }
        }
        guard let pad = found else {
            abandon()
            if SignalTrap.fired { throw ExitCode(130) }
            throw DeviceError.unsupported("the emulated DualSense did not appear (is hid-playstation loaded? sudo modprobe hid-playstation); try --devices in-process")
        }
        let source: HidrawPadSource
        do { source = try HidrawPadSource(pad: pad, slot: PadSlot(0)) } catch { abandon(); throw error }  // as `forward` reads a DualSense
        var shown = DualSenseOutputState()  // forwarder thread only (padFeedback)
        // The host's side, found through udev once `serve` made it: read as a game would, written as
        // a game would. Two threads ask (display and game); one lock serialises them and libudev.
        let host = LockedBox(HostSide(udev: udev))
        return DemoEnds(
            source: source,
            makeHostPad: { try PlayStationVirtualPad(arrival: $0) },
            hostView: {
                host.withLock { host in
                    guard let pad = host.pad() else { return "(no virtual pad yet)" }
                    _ = try? pad.reader.readAvailable()
                    return DemoView.describe(pad.reader.snapshot())
                }
            },
            padFeedback: {
                for report in physical.takeOutputs() { (try? DualSenseOutputDecoder.decode(report))?.apply(to: &shown) }
                return shown
            },
            gameWrite: { report in
                host.withLock { host in
                    guard let pad = host.pad() else { return false }
                    return (try? pad.hidraw.write(report)) != nil
                }
            },
            silence: { source.silence() },
            teardown: abandon)
    }

    /// The host's virtual pad as the demo's game and view reach it, once udev shows it.
    struct HostSide {
        let udev: Udev
        var found: (reader: LivePadReader, hidraw: HIDRawDevice)?

        mutating func pad() -> (reader: LivePadReader, hidraw: HIDRawDevice)? {
            if let found { return found }
            guard let virtual = udev.pads().first(where: { $0.isHostVirtualPad && $0.hasItsInputNodes }), let node = virtual.hidraw,
                  let reader = try? LivePadReader(pad: virtual), let hidraw = try? HIDRawDevice(path: node) else { return nil }
            found = (reader, hidraw)
            return found
        }
    }
}

/// The host's "game": a loop of lights, rumble and trigger effects, written as DualSense output
/// reports to the virtual pad, exactly what a game's hidraw or driver writes would be.
enum DemoGame {
    enum Step {
        case lightbar(UInt8, UInt8, UInt8), player(Int), rumble(MotorLevels), trigger(TriggerSide, [String])
    }

    static let loop: [(at: Double, step: Step)] = [
        (0.0, .lightbar(0, 64, 255)), (0.0, .player(1)),
        (1.0, .rumble(MotorLevels(low: 200, high: 60))), (1.6, .rumble(MotorLevels(low: 0, high: 0))),
        (2.5, .trigger(.right, ["feedback", "3", "8"])), (3.0, .lightbar(255, 40, 0)),
        (4.0, .rumble(MotorLevels(low: 80, high: 220))), (4.4, .rumble(MotorLevels(low: 0, high: 0))),
        (5.0, .trigger(.left, ["weapon", "2", "6", "8"])), (5.0, .player(3)),
        (6.5, .trigger(.both, ["off"])), (6.5, .lightbar(0, 255, 80)),
    ]
    static let period = 8.0

    /// `deadline` is read as it moves (it is set when the pad is up); `padUp` is called then.
    static func play(until deadline: () -> MonotonicInstant, write: ([UInt8]) -> Bool, padUp: () -> Void) {
        var state = DualSenseOutputState()
        var encoder = DualSenseOutputEncoder()
        func stop() -> Bool { SignalTrap.fired || MonotonicInstant.now >= deadline() }
        // Wait for the host's virtual pad; a game starts when its pad shows up.
        // Until then it probes with an empty report, harmless before anything plays.
        while !stop() {
            if let report = try? encoder.encode(state, bus: .usb, changedOnly: false), write(report) { padUp(); break }
            SignalTrap.sleep(min(.milliseconds(100), deadline() - MonotonicInstant.now))
        }
        let start = MonotonicInstant.now
        var index = 0, lap = 0.0
        while !stop() {
            let (at, step) = loop[index]
            let due = start + .milliseconds(Int((lap + at) * 1000))
            if MonotonicInstant.now < due { SignalTrap.sleep(min(due, deadline()) - MonotonicInstant.now); continue }
            switch step {
            case .lightbar(let r, let g, let b): state.lightbar = RGBColor(red: r, green: g, blue: b)
            case .player(let n): state.playerLEDs = try? PlayerLEDs(player: n)
            case .rumble(let levels): state.rumble = levels
            case .trigger(let side, let words):
                if let command = try? TriggerCommand(arguments: [side.rawValue] + words) {
                    if command.side != .right { state.leftTrigger = command.effect }
                    if command.side != .left { state.rightTrigger = command.effect }
                }
            }
            if let report = try? encoder.encode(state, bus: .usb), !DualSenseOutputEncoder.flagsNothing(report) { _ = write(report) }
            index += 1
            if index == loop.count { index = 0; lap += period }
        }
        // A game that quits stops its motors.
        state.rumble = .silent
        if let report = try? encoder.encode(state, bus: .usb), !DualSenseOutputEncoder.flagsNothing(report) { _ = write(report) }
    }
}

/// Both ends, live: redrawn in place on a terminal, one line per change otherwise.
struct DemoView {
    var lines: [String] = []
    var block = InPlaceBlock()
    private(set) var hostUpdates = 0
    let terminal = standardOutputIsTerminal

    static let interval: Duration = .milliseconds(100)

    /// What the forwarding loop hands the view: copies, so the view never touches the pad source.
    struct Frame {
        var pad: PadStateSnapshot
        var touch: TouchSnapshot
        var feedback: DualSenseOutputState
        var status: PadForwarder.Status
    }

    /// Draws a frame with the host's pad as a game sees it now (on the view's thread).
    mutating func draw(_ frame: Frame, host: () -> String) {
        let status = frame.status
        let rtt = status.roundTrip.map { String(format: "%.2f ms", Double($0 / .microseconds(1)) / 1000) } ?? "-"
        let next = [
            "pad   " + Self.describe(frame.pad, frame.touch),
            "host  " + host(),
            "back  " + Self.describe(frame.feedback),
            "link  \(status.connected ? "up" : "down")  rtt \(rtt)  sent \(status.sent)  received \(status.received)  rejected \(status.rejected)",
        ]
        if lines.count > 1, next[1] != lines[1] { hostUpdates += 1 }
        if terminal {
            block.draw(next)
        } else {
            // The link line changes with every datagram: print it only with another change.
            let changed = zip(next, lines.isEmpty ? Array(repeating: "", count: next.count) : lines).dropLast().filter { $0 != $1 }.map(\.0)
            for line in changed { print(line) }
        }
        lines = next
    }

    func finish() {
        if !terminal, let link = lines.last { print(link) }
    }

    static func describe(_ state: PadStateSnapshot, _ touch: TouchSnapshot) -> String {
        let buttons = GamepadButtons(rawValue: state.buttons).names + [DPad(hat: state.dpad)].filter { $0 != .none }.map { "dpad-" + $0.name }
        var text = "buttons [\(buttons.joined(separator: " "))]  left \(state.leftX),\(state.leftY)  right \(state.rightX),\(state.rightY)  l2 \(state.l2)  r2 \(state.r2)"
        let contacts = [touch.first, touch.second].filter(\.active).map { "\($0.x),\($0.y)" }
        if !contacts.isEmpty { text += "  touch " + contacts.joined(separator: " ") }
        return text
    }

    static func describe(_ state: LivePadState) -> String {
        let buttons = state.buttons + (state.dpad == "none" ? [] : ["dpad-" + state.dpad])
        var text = "buttons [\(buttons.joined(separator: " "))]  left \(state.left_stick[0]),\(state.left_stick[1])  right \(state.right_stick[0]),\(state.right_stick[1])  l2 \(state.l2)  r2 \(state.r2)"
        if !state.touch.isEmpty { text += "  touch " + state.touch.map { "\($0.x),\($0.y)" }.joined(separator: " ") }
        return text + "  (evdev)"
    }

    static func describe(_ output: DualSenseOutputState) -> String {
        var parts: [String] = []
        if let r = output.rumble { parts.append("rumble \(r.low)/\(r.high)") }
        if let c = output.lightbar { parts.append("lightbar \(c.red),\(c.green),\(c.blue)") }
        if let p = output.playerLEDs { parts.append("player LEDs " + String(p.mask, radix: 2).leftPadded(5, "0")) }
        if let t = output.leftTrigger { parts.append("L2 \(t)") }
        if let t = output.rightTrigger { parts.append("R2 \(t)") }
        return parts.isEmpty ? "(nothing from the game yet)" : parts.joined(separator: "  ")
    }
}

enum DemoScripts {
    /// A tour of a DualSense's controls, looping: buttons, d-pad, sticks, triggers, touch, motion.
    static let pad = """
        # padgate demo: a scripted DualSense (see docs/emulate-script.md)
        wait 1000
        press south
        wait 400
        release south
        dpad up-right
        wait 400
        dpad none
        left 255 128
        right 128 0
        wait 400
        left 128 128
        right 128 128
        l2 128
        r2 255
        wait 400
        l2 0
        r2 0
        touch 0 300 500
        wait 200
        touch 0 900 500
        wait 200
        touch 0 1500 500
        touch 1 960 900
        wait 300
        untouch 0
        untouch 1
        gyro 2000 0 -1000
        wait 300
        gyro 0 0 0
        press ps options
        wait 300
        release ps options
        wait 500
        repeat

        """
}
