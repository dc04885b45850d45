import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import PadgateRunner
import XCTest

/// Device tests need the kernel's uhid and uinput. Where they are missing (a container, CI host)
/// they skip loudly; `make test` runs them again inside the test guest, where they are present.
/// There (and wherever tools/test-devices.sh runs them) PADGATE_REQUIRE_DEVICES=1 turns a missing
/// device into a failure, so a guest whose modules did not load cannot pass by skipping.
func requireDeviceAccess(_ paths: [String] = [UHIDDevice.path, UInputGamepad.path]) throws {
    for path in paths where access(path, R_OK | W_OK) != 0 {
        try skipLoudly("\(path) is not writable here")
    }
}

struct DevicesMissing: Error, CustomStringConvertible {
    let description: String
}

/// Skips with a message on stderr, or fails when the caller promised the devices are here.
func skipLoudly(_ reason: String) throws -> Never {
    if ProcessInfo.processInfo.environment["PADGATE_REQUIRE_DEVICES"] == "1" {
        throw DevicesMissing(description: "\(reason), but PADGATE_REQUIRE_DEVICES=1 says device tests must run here")
    }
    let message = "SKIPPED LOUDLY: \(reason); this test runs in the test guest (make test-devices)"
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    throw XCTSkip(message)
}

/// The checkout these tests were built from: fixtures, udev rules and the hid-tools venv live there.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// How long a test waits for `serve` to make the host's pad after `forward` starts: pairing, the
/// session, and the kernel's drivers binding the pad (a USB host pad: vhci-hcd, usbhid,
/// snd-usb-audio, hid-playstation), which on the emulated guest with both cores busy took over 15 s.
/// A budget for the emulator's speed, not a bound of padgate's.
enum HostPadBudget {
    static let made: Duration = .seconds(60)
}

/// Polls `condition` until it holds or `timeout` passes (udev needs a moment to name new nodes).
/// Budgets are generous: they are spent only when a test fails, and under emulation with both
/// host cores busy a driver's probe has been seen to take seconds (a 5 s default once ran out).
/// A wait that runs out is said on stderr with its place: on a test's success path that is a bug
/// (tools/test-devices.sh lists them), however slow the machine.
/// `expiryIsExpected`: a slice of a caller's own retry loop, or a check that something does not
/// happen; running out is then not reported.
func eventually<T>(timeout: Duration = .seconds(20), expiryIsExpected: Bool = false, file: StaticString = #fileID, line: UInt = #line,
                   _ condition: () throws -> T?) rethrows -> T? {
    let deadline = MonotonicInstant.now + timeout
    repeat {
        if let value = try condition() { return value }
        usleep(20_000)
    } while MonotonicInstant.now < deadline
    if !expiryIsExpected { reportExpiredWait(timeout, file: file, line: line) }
    return nil
}

/// One line a run-out wait leaves in the log (tools/test-devices.sh collects them).
func reportExpiredWait(_ timeout: Duration, file: StaticString, line: UInt) {
    FileHandle.standardError.write(Data("WAIT RAN OUT: \(file):\(line) after \(timeout)\n".utf8))
}

/// The pad that udev groups for an emulated DualSense or DualShock 4, once every evdev node the
/// running kernel's driver makes (`KernelVersion.evdevRoles`), the hidraw node and the battery (the
/// driver registers it last) are there. 30 s: hid-playstation's probe under emulation on a loaded
/// machine once took longer than the 5 s this used to allow.
func padFor(_ virtual: EmulatedPlayStationPad, udev: Udev, timeout: Duration = .seconds(30),
            file: StaticString = #fileID, line: UInt = #line) -> Pad? {
    let roles = KernelVersion.evdevRoles(kind: virtual.kind, bus: virtual.bus)
    return eventually(timeout: timeout, file: file, line: line) {
        udev.pads().first { $0.uniq == virtual.uniq && $0.evdev.map(\.role) == roles && $0.hidraw != nil && $0.capabilities.contains(.battery) }
    }
}

/// Sends three raw gyro/accel vectors from `physical` (moving its sensor clock `sensorStep` a report)
/// until each reads the same within 1 LSB on the physical and the forwarded pad's evdev nodes.
func checkMotionForwarded(from physical: EmulatedPlayStationPad, input: inout GamepadState, sensorStep: UInt32, timeout: Duration,
                          physicalReader: LivePadReader, hostReader: LivePadReader,
                          file: StaticString = #fileID, line: UInt = #line) throws {
    let vectors = [(Vector3(x: 1477, y: -903, z: 25), Vector3(x: 812, y: 7911, z: -1204)),
                   (Vector3(x: -12001, y: 3, z: 9000), Vector3(x: -4096, y: 300, z: 4096)),
                   (Vector3(x: 7, y: -7, z: -31000), Vector3(x: 20, y: -8000, z: 1))]
    for (gyro, accel) in vectors {
        input.motion.first = MotionSample(gyro: gyro, accel: accel)
        var last: (physical: [Int32], host: [Int32]) = ([], [])
        let matched = try eventually(timeout: timeout, file: file, line: line) { () throws -> Bool? in
            input.sensorTimestamp &+= sensorStep
            try physical.send(input)
            _ = Poll.wait(physicalReader.descriptors + hostReader.descriptors, timeout: .milliseconds(20))
            _ = try physicalReader.readAvailable(); _ = try hostReader.readAvailable()
            let p = physicalReader.snapshot(), h = hostReader.snapshot()
            last = ((p.gyro ?? []) + (p.accel ?? []), (h.gyro ?? []) + (h.accel ?? []))
            guard last.physical.count == 6, last.host.count == 6, last.physical != [0, 0, 0, 0, 0, 0] else { return nil }
            return zip(last.physical, last.host).allSatisfy { abs($0 - $1) <= 1 } ? true : nil
        }
        XCTAssertNotNil(matched, "gyro+accel for raw \(gyro) \(accel): client evdev \(last.physical), host evdev \(last.host)",
                        file: file, line: line)
    }
}

/// Reads a pad's evdev nodes until `condition` holds on its state.
/// `expiryIsExpected`: the caller checks that something does not happen, so running out is the
/// expected end and is not reported.
func waitForState(_ reader: LivePadReader, timeout: Duration = .seconds(5), expiryIsExpected: Bool = false,
                  file: StaticString = #fileID, line: UInt = #line, _ condition: (LivePadState) -> Bool) throws -> LivePadState? {
    let deadline = MonotonicInstant.now + timeout
    while MonotonicInstant.now < deadline {
        _ = Poll.wait(reader.descriptors, timeout: .milliseconds(50))
        _ = try reader.readAvailable()
        let state = reader.snapshot()
        if condition(state) { return state }
    }
    if !expiryIsExpected { reportExpiredWait(timeout, file: file, line: line) }
    return nil
}

/// A running `padgate` subprocess whose standard output is collected line by line.
final class PadgateProcess: Sendable {
    let process = Process()
    private let pipe = Pipe()
    /// What came after the last newline, and the lines before it.
    private let collected = LockedBox((rest: Data(), lines: [String]()))

    /// `namespace`: run inside that network namespace (`ip netns exec`, which execs padgate itself,
    /// so signals reach it). `includeStandardError`: collect diagnostics too.
    init(_ arguments: [String], namespace: String? = nil, includeStandardError: Bool = false, environment: [String: String] = [:]) throws {
        process.environment = testEnvironment(environment)
        if let namespace {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            process.arguments = ["netns", "exec", namespace, padgateExecutable.path] + arguments
        } else {
            process.executableURL = padgateExecutable
            process.arguments = arguments
        }
        process.standardOutput = pipe
        if includeStandardError { process.standardError = pipe }
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.collected.update { collected in
                collected.rest.append(data)
                while let newline = collected.rest.firstIndex(of: 0x0a) {
                    collected.lines.append(String(decoding: collected.rest[..<newline], as: UTF8.self))
                    collected.rest.removeSubrange(...newline)
                }
            }
        }
        try process.run()
    }

    func snapshot() -> [String] { collected.value.lines }

    /// Waits for an output line satisfying `match`.
    func waitForLine(timeout: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line,
                     _ match: (String) -> Bool) -> String? {
        eventually(timeout: timeout, file: file, line: line) { snapshot().first(where: match) }
    }

    func interrupt() {
        if process.isRunning { process.interrupt() }
        process.waitUntilExit()
        pipe.fileHandleForReading.readabilityHandler = nil
    }
    deinit { if process.isRunning { process.terminate() } }
}


/// `padgate serve --pair` as a person starts it, and `padgate pair` with the PIN it prints, so the
/// `forward` that follows is a paired client (hosts accept only those). Both share
/// PADGATE_STATE_DIR, the caller's. `namespace`: run both inside network namespaces.
func startPairedServe(_ arguments: [String], host: String, port: String, serveNamespace: String? = nil,
                      clientNamespace: String? = nil) throws -> PadgateProcess {
    let serve = try PadgateProcess(["serve", "--pair"] + arguments + ["--address", host, "--port", port],
                                   namespace: serveNamespace, includeStandardError: true)
    guard let line = serve.waitForLine(timeout: .seconds(15), { $0.contains("pairing PIN") }),
          let pin = line.split(separator: " ").first(where: { $0.count == 6 && $0.allSatisfy(\.isNumber) }) else {
        serve.interrupt()
        throw DeviceError.unsupported("serve printed no pairing PIN: \(serve.snapshot())")
    }
    let address = HostAndPort(host: host, port: UInt16(port) ?? 0).description  // [v6]:port for IPv6
    let pair = try PadgateProcess(["pair", address, "--pin", String(pin)], namespace: clientNamespace, includeStandardError: true)
    pair.process.waitUntilExit()
    guard pair.process.terminationStatus == 0 else {
        serve.interrupt()
        // Both sides' words: the host's log says which step or deadline ended it.
        throw DeviceError.unsupported("pairing failed: \(pair.snapshot()); the host said: \(serve.snapshot())")
    }
    return serve
}

/// Runs a shell command; its output, or an error carrying it.
@discardableResult
func shell(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ShellError(command: command, output: output) }
    return output
}

struct ShellError: Error, CustomStringConvertible {
    var command: String, output: String
    var description: String { "'\(command)' failed: \(output)" }
}

/// A DualSense IMU calibration feature report (0x05, 41 bytes) from its fields, laid out as
/// hid-playstation's dualsense_get_calibration_data reads it: gyro plus and minus interleaved per
/// axis, accelerometer likewise.
func dualSenseCalibrationReport(gyroBias: [Int16] = [0, 0, 0], gyroPlus: [Int16], gyroMinus: [Int16], speedPlus: Int16, speedMinus: Int16,
                                accelPlus: [Int16], accelMinus: [Int16]) -> [UInt8] {
    var report = [UInt8](repeating: 0, count: 41)
    report[0] = 0x05
    func put(_ offset: Int, _ value: Int16) {
        report[offset] = UInt8(truncatingIfNeeded: value); report[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }
    for axis in 0..<3 {
        put(1 + 2 * axis, gyroBias[axis])
        put(7 + 4 * axis, gyroPlus[axis]); put(9 + 4 * axis, gyroMinus[axis])
        put(23 + 4 * axis, accelPlus[axis]); put(25 + 4 * axis, accelMinus[axis])
    }
    put(19, speedPlus); put(21, speedMinus)
    return report
}

/// A uhid device that answers the kernel at once, as a plugged-in pad does. Unanswered, every
/// GET_REPORT holds its caller for uhid's 5 s timeout: hid-input reads an Xbox pad's battery that
/// way when udevd's rules read its power_supply, so udevd spent 20-35 s over each such pad (and the
/// tests waited it out). GET_REPORT is answered "no such report" (EIO), as a pad without that
/// feature report would; SET_REPORT is acknowledged.
final class RespondingUHIDDevice: Sendable {
    let device: UHIDDevice
    private let running = LockedBox(true)
    private let finished = DispatchSemaphore(value: 0)

    init(_ identity: UHIDDevice.Identity, descriptor: [UInt8]) throws {
        device = try UHIDDevice()
        try device.create(identity, descriptor: descriptor)
        let device = device
        Thread { [self] in
            while running.value {
                _ = Poll.wait([device.descriptor], timeout: .milliseconds(50))
                while let event = try? device.read() {
                    switch event {
                    case .getReport(let request, _, _): try? device.replyGetReport(requestID: request, data: [], error: UInt16(EIO))
                    case .setReport(let request, _, _, _): try? device.replySetReport(requestID: request)
                    default: break
                    }
                }
            }
            finished.signal()
        }.start()
    }

    func input(_ report: [UInt8]) throws { try device.input(report) }

    /// Unplugs the device; the answering thread ends first.
    func destroy() {
        guard running.withLock({ running in defer { running = false }; return running }) else { return }
        finished.wait()
        try? device.destroy()
    }

    deinit { destroy() }
}

/// The running kernel's version, for the few assertions where a driver behaves differently from
/// one kernel line to the next: each such test asserts the running version's own behaviour, read
/// from that kernel's source, with the range beside it.
struct KernelVersion: Comparable, CustomStringConvertible {
    var major: Int, minor: Int

    static let running: KernelVersion = {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return KernelVersion(major: numbers.first ?? 0, minor: numbers.dropFirst().first ?? 0)
    }()

    static func < (a: KernelVersion, b: KernelVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    var description: String { "\(major).\(minor)" }

    /// hid-playstation drives the DualShock 4 from 6.2 (commit "HID: playstation: add DualShock4
    /// ..."); up to 6.1 hid-sony does.
    static let playStationDrivesDualShock4 = KernelVersion(major: 6, minor: 2)
    /// hid-playstation adds a DualSense's "Headset Jack" evdev node (SW_HEADPHONE_INSERT,
    /// SW_MICROPHONE_INSERT) from 6.18 (absent from 6.12's driver, present in 7.2's).
    static let dualSenseHeadsetJackNode = KernelVersion(major: 6, minor: 18)
    /// hid-steam knows the Steam Deck from 6.3 ("HID: hid-steam: Add Steam Deck support",
    /// applied 2023-02-06; docs/research/valve-pads.md §2.1): before, hid-generic binds it.
    static let hidSteamDrivesTheDeck = KernelVersion(major: 6, minor: 3)

    /// How the running kernel's DualShock 4 driver turns raw gyro counts into evdev values:
    /// hid-sony (≤ 6.1) subtracts the reported bias and divides by plus − minus; hid-playstation
    /// (6.2+) takes the bias as 0 and divides by |plus − bias| + |minus − bias|
    /// (dualshock4_get_calibration_data in each).
    static var dualShock4Convention: CalibrationConvention { running < playStationDrivesDualShock4 ? .legacy : .kernel }

    /// The evdev nodes the running kernel makes for a PlayStation pad: gamepad, touchpad, motion,
    /// and from 6.18 a USB DualSense's headset jack (hid-playstation: "Bluetooth audio is currently
    /// not supported", so only over USB).
    static func evdevRoles(kind: PadKind, bus: PadBus) -> [EvdevRole] {
        let jack = kind.isDualSenseFamily && bus == .usb && running >= dualSenseHeadsetJackNode
        return [.gamepad, .touchpad, .motion] + (jack ? [.jack] : [])
    }
}

/// The input device ("input12") that an evdev node ("/dev/input/event5") belongs to.
func inputDeviceName(of node: String) -> String? {
    let event = URL(fileURLWithPath: node).lastPathComponent
    return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/sys/class/input/\(event)/device"))
        .map { URL(fileURLWithPath: $0).lastPathComponent }
}

/// Two network namespaces joined by a veth pair, the host at `prefix.1` and the client at
/// `prefix.2`, for what crosses a link (netem loss, delay). Needs root and iproute2.
struct NamespacePair {
    enum Side { case host, client }
    let host: String, client: String
    let hostAddress: String, clientAddress: String
    let tag: String

    /// `tag`: a few letters naming the test's namespaces and links; `prefix`: a /24 such as "10.77.0".
    init(tag: String, prefix: String) throws {
        self.tag = tag
        host = "\(tag)h\(getpid())"
        client = "\(tag)c\(getpid())"
        hostAddress = "\(prefix).1"
        clientAddress = "\(prefix).2"
        try shell("modprobe -a veth sch_netem")
        try shell("""
            ip netns add \(host) && ip netns add \(client) &&
            ip link add \(tag)veth-h netns \(host) type veth peer name \(tag)veth-c netns \(client) &&
            ip -n \(host) addr add \(hostAddress)/24 dev \(tag)veth-h && ip -n \(host) link set \(tag)veth-h up && ip -n \(host) link set lo up &&
            ip -n \(client) addr add \(clientAddress)/24 dev \(tag)veth-c && ip -n \(client) link set \(tag)veth-c up && ip -n \(client) link set lo up
            """)
    }

    static var unavailableReason: String? {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") && FileManager.default.isExecutableFile(atPath: "/usr/sbin/tc")
            ? nil : "network namespaces need root and iproute2 (ip, tc)"
    }

    private func where_(_ side: Side) -> (namespace: String, link: String) {
        side == .host ? (host, "\(tag)veth-h") : (client, "\(tag)veth-c")
    }

    /// Sets `side`'s outgoing queue to netem with `spec` ("loss 5% delay 10ms 5ms").
    func netem(_ side: Side, _ spec: String) throws {
        let (namespace, link) = where_(side)
        try shell("ip netns exec \(namespace) tc qdisc replace dev \(link) root netem \(spec)")
    }

    /// What netem dropped on `side`'s outgoing queue so far.
    func dropped(_ side: Side) throws -> (count: Int, stats: String) {
        let (namespace, link) = where_(side)
        let stats = try shell("ip netns exec \(namespace) tc -s qdisc show dev \(link)")
        return (stats.split(separator: "dropped ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0, stats)
    }

    func remove() { _ = try? shell("ip netns del \(client); ip netns del \(host)") }
}

/// `serve` on 127.0.0.1 in a scratch state of its own, with its control socket, and `host pair`
/// to pair clients with it as an administrator would while it runs.
final class ScratchHost {
    let state: ScratchState
    /// For `padgate host …` against this host.
    let environment: [String: String]
    let port: Int
    let serve: RunningPadgate

    init(_ name: String, virtual: String, ports: Range<Int>, arguments: [String] = []) throws {
        state = try ScratchState(name)
        environment = state.environment.merging(["PADGATE_RUNTIME_DIR": state.appendingPathComponent("run").path]) { $1 }
        port = Int.random(in: ports)
        serve = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "\(port)", "--virtual", virtual] + arguments, environment: environment)
        XCTAssertTrue(serve.waitFor("listening on", timeout: .seconds(60)), serve.output)
    }

    /// Stops `serve`; callers `defer` it, which also keeps the host alive to the end of their scope.
    func stop() {
        guard !stopped else { return }  // once: a second kill could reach a process that took its pid
        stopped = true
        _ = serve.stopOutcome(after: SIGTERM)
    }
    private var stopped = false

    deinit { stop() }

    /// Arms a PIN with `host pair` and pairs `client` with it.
    func pair(_ client: ScratchState, file: StaticString = #filePath, line: UInt = #line) throws {
        let pairing = try RunningPadgate(["host", "pair"], environment: environment)
        XCTAssertTrue(pairing.waitFor("pairing PIN", timeout: .seconds(60)), pairing.output, file: file, line: line)
        let pin = try XCTUnwrap(pairing.output.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }, file: file, line: line)
        let paired = try padgate(["pair", "127.0.0.1:\(port)", "--pin", String(pin)], environment: client.environment, timeLimit: .seconds(60))
        XCTAssertEqual(paired.status, 0, paired.stderr, file: file, line: line)
        XCTAssertNotNil(pairing.waitForExit(limit: .seconds(10)), file: file, line: line)
    }
}

/// `padgate emulate MODEL` makes a pad found by its hidraw node, and `padgate rumble` on it sends
/// the family's own rumble, which `emulate` prints as it reads it; the end of the rumble is a stop.
func assertEmulatedRumble(model: String, kind: PadKind, summary: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let emulate = try PadgateProcess(["emulate", model, "--json", "--duration", "60"], includeStandardError: true)
    defer { emulate.interrupt() }
    XCTAssertNotNil(emulate.waitForLine(timeout: .seconds(30)) { $0.contains(summary) && $0.contains("is up") },
                    "\(emulate.snapshot().suffix(3))", file: file, line: line)
    let pad = try XCTUnwrap(eventually(timeout: .seconds(30)) { try? Udev().pads().first { $0.kind == kind && $0.hidraw != nil } },
                            "no \(kind.displayName) listed: \(emulate.snapshot().suffix(3))", file: file, line: line)
    let run = try padgate(["rumble", "200", "100", "--for", "500ms", "--pad", try XCTUnwrap(pad.hidraw)])
    XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
    XCTAssertNotNil(emulate.waitForLine { $0.contains("rumble strong \(200 * 257) weak \(100 * 257)") }, "\(emulate.snapshot().suffix(4))",
                    file: file, line: line)
    XCTAssertNotNil(emulate.waitForLine { $0.contains("rumble strong 0 weak 0") }, "the rumble ends in a stop: \(emulate.snapshot().suffix(4))",
                    file: file, line: line)
}

/// A game's 300 ms rumble effect (strong 49152) played on a host pad's evdev node by
/// Tests/SDLProbe/ff-play.py, returned once it has played: the clock starts then, since Python's
/// own start-up in the emulated guest (seconds when loaded) is not padgate's to bound. The caller
/// ends the process.
func playGameEffect(on gamepadNode: String, file: StaticString = #filePath, line: UInt = #line) throws -> Process {
    let player = Process()
    player.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    player.arguments = [repositoryRoot.appendingPathComponent("Tests/SDLProbe/ff-play.py").path, gamepadNode, "49152", "0", "300", "3"]
    let said = Pipe()
    player.standardOutput = said
    try player.run()
    let played = said.fileHandleForReading.availableData
    XCTAssertEqual(String(decoding: played, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "played", file: file, line: line)
    return player
}

/// The evdev node of the input device named `name` whose phys is `phys` (/sys/class/input).
func inputNode(named name: String, phys: String) -> String? {
    let inputs = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/input")) ?? []
    for event in inputs where event.hasPrefix("event") {
        func read(_ file: String) -> String {
            ((try? String(contentsOfFile: "/sys/class/input/\(event)/device/\(file)", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if read("name") == name && read("phys") == phys { return "/dev/input/\(event)" }
    }
    return nil
}

/// The host's pad for a forwarded Valve pad (a Deck's controls, a Steam Controller) and a reader
/// of its gamepad node: a Steam Deck where hid-steam drives Decks (6.3 on; bound by hid-steam,
/// its hidraw node the Deck SDL opens, its evdev node named and placed as the host's pad), else an
/// Xbox 360 pad, and the host says why.
/// The driver bound to a hidraw node's HID device, once bound: a driver's probe makes the node
/// (`hid_hw_start`) and the kernel links the driver only when the probe returns (`driver_bound`),
/// so a node found the moment it appears can have none yet (hid-steam's client device for a
/// Deck's hidraw is added last in the Deck's probe: a loaded 7.2 guest read no link once). nil
/// when none is bound within `timeout`.
/// With `expecting`, until that driver is bound (another can hold the device first), returning the
/// last one seen.
func boundDriver(ofHidraw hidraw: String, expecting: String? = nil, timeout: Duration = .seconds(10)) -> String? {
    let link = "/sys/class/hidraw/\((hidraw as NSString).lastPathComponent)/device/driver"
    var last: String?
    _ = eventually(timeout: timeout, expiryIsExpected: true) { () -> Bool? in
        last = (try? FileManager.default.destinationOfSymbolicLink(atPath: link)).map { ($0 as NSString).lastPathComponent }
        guard let last else { return nil }
        return expecting.map { last == $0 ? true : nil } ?? true
    }
    return last
}

struct ValveHostPad {
    let pad: Pad
    let gamepadNode: String
    let reader: LivePadReader
    let isDeck: Bool

    init(_ udev: Udev, host: ScratchHost, file: StaticString = #filePath, line: UInt = #line) throws {
        isDeck = KernelVersion.running >= .hidSteamDrivesTheDeck
        let isDeck = isDeck
        pad = try XCTUnwrap(eventually(timeout: .seconds(60)) {
            udev.pads().first { $0.isHostVirtualPad && (isDeck ? $0.kind == .steamDeck : $0.gamepadNode != nil) }
        }, "no host pad; serve said \(host.serve.output.suffix(1500))", file: file, line: line)
        if isDeck {
            XCTAssertEqual(boundDriver(ofHidraw: try XCTUnwrap(pad.hidraw), expecting: "hid-steam"), "hid-steam", "kernel \(KernelVersion.running)", file: file, line: line)
            gamepadNode = try XCTUnwrap(eventually(timeout: .seconds(30)) { inputNode(named: "Steam Deck", phys: PadPhys.hostVirtual) },
                                        "hid-steam made no evdev node for the host's Deck: \((try? shell("cat /proc/bus/input/devices")) ?? "")",
                                        file: file, line: line)
        } else {
            XCTAssertEqual(pad.name, "Microsoft X-Box 360 pad", "before 6.3 the host shows an Xbox 360 pad (kernel \(KernelVersion.running))", file: file, line: line)
            XCTAssertTrue(host.serve.output.contains("does not drive the Steam Deck"), "the host says why: \(host.serve.output.suffix(1500))", file: file, line: line)
            gamepadNode = try XCTUnwrap(pad.gamepadNode?.path, file: file, line: line)
        }
        reader = try LivePadReader(pad: Pad(id: gamepadNode, kind: isDeck ? .steamDeck : .xbox, kernelBus: 3, vendorID: 0, productID: 0,
                                            name: "host pad", uniq: "", phys: "", hidraw: nil,
                                            evdev: [EvdevNode(path: gamepadNode, role: .gamepad, name: "host pad")], capabilities: []))
    }
}
