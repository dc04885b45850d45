import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import PadgateRunner
import XCTest

/// A game's HD haptics on a pad without voice coils, against the real kernel: the physical pad is
/// an emulated DualShock 4 (hid-playstation, or hid-sony on 6.1, binds it), `serve --virtual
/// dualsense-usb` shows it to games as a USB DualSense with its audio function, `aplay` plays the
/// haptics signal of `HapticsForwardingTests` into that card, and the DualShock 4's motors (its
/// output report, as its kernel driver writes it for padgate's force feedback) follow the coils'
/// loudness: the left coil's on the strong motor, the right's on the weak one.
///
/// Loaded-guest bounds as in `HapticsForwardingTests` (a loaded host pad plays the game's audio
/// slow): each 300 ms burst runs the motors for 150 ms to 1 s, padgate's part of its start is
/// under 500 ms, and between and after the bursts the motors stop.
final class HapticsOnMotorsTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
    }

    var state: URL!
    override func setUp() { state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-motors-\(UUID())") }

    struct Motors { let at: MonotonicInstant; let levels: MotorLevels }

    /// A DualShock 4 whose every motor report is kept with its time, forwarded to a host that
    /// shows it as a USB DualSense; the host's pad and its sound card.
    func forwardedDualShock4() throws -> (physical: EmulatedPlayStationPad, motors: LockedBox<[Motors]>, serve: PadgateProcess,
                                          forward: PadgateProcess, hostPad: Pad, card: Int) {
        let motors = LockedBox<[Motors]>([])
        let physical = try EmulatedPlayStationPad(kind: .dualShock4, bus: .usb, onOutput: { report in
            guard let levels = (try? DualShock4OutputDecoder.decode(report))?.motors else { return }
            motors.update { if $0.count < 20_000 { $0.append(Motors(at: .now, levels: levels)) } }
        })
        addTeardownBlock { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        setenv("PADGATE_STATE_DIR", state.path, 1)
        let port = String(28_100 + Int.random(in: 0..<100))
        let serve = try startPairedServe(["--virtual", "dualsense-usb", "--log-level", "debug"], host: "127.0.0.1", port: port)
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
        addTeardownBlock { forward.interrupt(); serve.interrupt() }
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.pads().first { $0.isHostVirtualPad && $0.bus == .usb } },
                                    "the host never made its USB DualSense for the DualShock 4: \(serve.snapshot())")
        XCTAssertEqual(hostPad.kind, .dualSense)
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: hostPad) }, "snd-usb-audio made no card for the host's pad")
        return (physical, motors, serve, forward, hostPad, card)
    }

    /// Runs of reports with a motor turning, split where both stay stopped for 150 ms.
    func runs(_ reports: [Motors]) -> [[Motors]] {
        var groups: [[Motors]] = []
        var stoppedSince: MonotonicInstant?
        for report in reports {
            if report.levels.isSilent {
                if stoppedSince == nil { stoppedSince = report.at }
                continue
            }
            if let last = groups.last?.last, stoppedSince.map({ report.at - $0 < .milliseconds(150) }) ?? true, report.at - last.at < .milliseconds(300) {
                groups[groups.count - 1].append(report)
            } else {
                groups.append([report])
            }
            stoppedSince = nil
        }
        return groups
    }

    func testAGamesHapticsTurnADualShock4sMotors() throws {
        let (_, motors, serve, forward, _, card) = try forwardedDualShock4()
        let file = try HapticsForwardingTests.signalFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try shell("aplay -q -D hw:\(card),0 -c 4 -r 48000 -f S16_LE -t raw \(file.path)")
        // Until the motors have stopped a while after the game ended.
        _ = eventually(timeout: .seconds(5), expiryIsExpected: true) { () -> Bool? in
            guard let last = motors.value.last, last.levels.isSilent, MonotonicInstant.now - last.at > .milliseconds(300) else { return nil }
            return true
        }
        let reports = motors.value
        let groups = runs(reports)
        let summary = groups.map { g in "\(g.count) reports from \(g.first!.at.nanoseconds / 1_000_000) ms, the last \(g.last!.at - g.first!.at) later, peak \(g.map(\.levels.low).max()!)/\(g.map(\.levels.high).max()!)" }
        print("haptics on a DualShock 4's motors: \(summary)")
        XCTAssertEqual(groups.count, 2, "the motors run for each burst and stop between: \(summary); forward said \(forward.snapshot().suffix(5))")
        guard groups.count == 2 else { return }
        // Levels from the bursts' amplitude: 150 Hz at full scale left, half right; 300 Hz full on both.
        XCTAssertGreaterThanOrEqual(groups[0].map(\.levels.low).max() ?? 0, 240, "the left coil's full scale on the strong motor")
        XCTAssertEqual(Double(groups[0].map(\.levels.high).max() ?? 0), 127, accuracy: 12, "the right coil's half on the weak motor")
        XCTAssertGreaterThanOrEqual(groups[1].map(\.levels.low).min() ?? 0, 1)
        XCTAssertGreaterThanOrEqual(groups[1].map(\.levels.high).max() ?? 0, 235)
        for (name, group) in [("150 Hz", groups[0]), ("300 Hz", groups[1])] {
            // From the first level to the stop after the last (the driver reports only changes).
            let stop = reports.first { $0.at > group.last!.at && $0.levels.isSilent }?.at ?? group.last!.at
            let running = stop - group.first!.at
            XCTAssertGreaterThan(running, .milliseconds(150), "\(name): the motors ran for the burst")
            XCTAssertLessThan(running, .seconds(1), "\(name): the motors ran on after the burst")
        }
        // padgate's part: the host pad's first packet of each burst to the motors turning.
        let host = serve.snapshot().compactMap { line -> MonotonicInstant? in
            guard let range = line.range(of: "sound on the coils from ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.flatMap { Int64($0) }.map { MonotonicInstant(nanoseconds: $0 * 1000) }
        }
        XCTAssertEqual(host.count, 2, "the host's log names two bursts")
        if host.count == 2 {
            let latencies = zip(host, groups).map { $1[0].at - $0 }
            print("haptics on motors: padgate's part (the host pad's packet to the motor report) \(latencies)")
            for latency in latencies { XCTAssertLessThan(latency, .milliseconds(500)) }
        }
        XCTAssertTrue(reports.last?.levels.isSilent ?? false, "the motors did not end stopped: \(reports.suffix(3).map(\.levels))")
    }

    /// The game's rumble wins over its haptics while it plays (docs/feedback.md), and the haptics
    /// come back after it; a killed host stops the motors within 250 ms (the underlay's 50 ms
    /// lease, on a busy guest).
    func testTheGamesRumbleWinsAndAKilledHostStopsTheMotors() throws {
        let (physical, motors, serve, _, hostPad, card) = try forwardedDualShock4()
        // The game: 150 Hz at full scale on both coils, for longer than the test.
        var bytes: [UInt8] = []
        for f in 0..<(10 * 48_000) {
            let s = Int16(sin(2 * .pi * 150 * Double(f) / 48_000) * 32_767)
            for sample in [0, 0, s, s] { bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)] }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-motors-\(UUID()).raw")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let game = Process()
        game.executableURL = URL(fileURLWithPath: "/usr/bin/aplay")
        game.arguments = ["-q", "-D", "hw:\(card),0", "-c", "4", "-r", "48000", "-f", "S16_LE", "-t", "raw", file.path]
        try game.run()
        defer { if game.isRunning { game.terminate() } }
        func seen(timeout: Duration, _ what: @escaping (MotorLevels) -> Bool) -> Bool {
            let from = motors.value.count
            return eventually(timeout: timeout) { motors.value.dropFirst(from).contains { what($0.levels) } ? true : nil } ?? false
        }
        XCTAssertTrue(seen(timeout: .seconds(10)) { $0.low >= 240 && $0.high >= 240 }, "the game's haptics never turned the motors: \(motors.value.suffix(3).map(\.levels))")

        var options = PadFeedback.Options()
        options.rumblePath = .evdev
        let rumble = PadFeedback(pad: hostPad, options: options)
        let rumbleLevels = MotorLevels(low: 60, high: 30)
        let before = motors.value.count
        try rumble.rumble(rumbleLevels, for: .milliseconds(700))
        rumble.close()
        XCTAssertTrue(motors.value.dropFirst(before).contains { $0.levels == rumbleLevels },
                      "the game's rumble did not win over its haptics: \(Set(motors.value.dropFirst(before).map(\.levels.description)))")
        XCTAssertTrue(seen(timeout: .seconds(5)) { $0.low >= 240 && $0.high >= 240 }, "the haptics did not come back after the rumble")

        kill(serve.process.processIdentifier, SIGKILL)
        let killed = MonotonicInstant.now
        _ = eventually(timeout: .seconds(2), expiryIsExpected: true) { () -> Bool? in
            guard let last = motors.value.last, last.levels.isSilent, MonotonicInstant.now - last.at > .milliseconds(500) else { return nil }
            return true
        }
        let after = motors.value.filter { $0.at > killed }
        XCTAssertTrue(motors.value.last?.levels.isSilent ?? false, "the motors did not stop after the host died")
        let stopped = try XCTUnwrap(after.first { $0.levels.isSilent }, "no stop reached the pad").at
        print("haptics on motors: stopped \(stopped - killed) after the host was killed")
        XCTAssertLessThan(stopped - killed, .milliseconds(250), "the motors ran on after the host died")
        _ = physical
    }

    /// A Switch Pro's HD rumble read from its documented layout (dekuNukem's
    /// rumble_data_table.md): per side, the high band's frequency (9 bits across bytes 0-1) and
    /// amplitude code (byte 1's upper 7 bits), the low band's frequency (byte 2's lower 7 bits)
    /// and amplitude code (byte 3 less 0x40, doubled, with byte 2's top bit).
    struct HDSide: CustomStringConvertible {
        let lowHz: Double, lowCode: Int, highHz: Double, highCode: Int
        init(_ d: ArraySlice<UInt8>) {
            let b = Array(d)
            let hf = Int(b[0]) | Int(b[1] & 1) << 8
            highHz = 10 * pow(2, Double(hf / 4 + 0x60) / 32)
            highCode = Int(b[1] >> 1)
            lowHz = 10 * pow(2, Double(Int(b[2] & 0x7f) + 0x40) / 32)
            lowCode = b[3] >= 0x40 ? Int(b[3] - 0x40) << 1 | Int(b[2] >> 7) : 0
        }
        var silent: Bool { lowCode == 0 && highCode == 0 }
        var description: String { "low \(Int(lowHz)) Hz @\(lowCode), high \(Int(highHz)) Hz @\(highCode)" }
    }

    /// The Switch Pro's actuators take a frequency: each burst arrives at its own (150 Hz on the
    /// low band, 300 Hz on the high band, within a step of the encoding, 2.2 %) with the coils'
    /// levels (the left at full scale, the right at half in the first burst), as rumble-only
    /// reports beside hid-nintendo's own, and the actuators end neutral.
    func testAGamesHapticsPlayOnASwitchProsHDRumbleAtTheirFrequency() throws {
        let physical = try EmulatedSwitchPro(calibration: EmulatedSwitchProTests.calibration)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(EmulatedSwitchProTests.padFor(physical, udev: udev))
        setenv("PADGATE_STATE_DIR", state.path, 1)
        let port = String(28_200 + Int.random(in: 0..<100))
        let serve = try startPairedServe(["--virtual", "dualsense-usb"], host: "127.0.0.1", port: port)
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.gamepadNode?.path), "--quiet"],
                                         includeStandardError: true)
        defer { forward.interrupt(); serve.interrupt() }
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.pads().first { $0.isHostVirtualPad && $0.bus == .usb } },
                                    "the host never made its USB DualSense for the Switch Pro: \(serve.snapshot())")
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: hostPad) })
        let file = try HapticsForwardingTests.signalFile()
        defer { try? FileManager.default.removeItem(at: file) }
        _ = physical.takeOutputs()
        let game = Process()
        game.executableURL = URL(fileURLWithPath: "/usr/bin/aplay")
        game.arguments = ["-q", "-D", "hw:\(card),0", "-c", "4", "-r", "48000", "-f", "S16_LE", "-t", "raw", file.path]
        try game.run()
        // padgate's reports (49 bytes; hid-nintendo's own are 10), with when they came.
        var reports: [(at: MonotonicInstant, left: HDSide, right: HDSide)] = []
        let deadline = MonotonicInstant.now + .seconds(10)
        while MonotonicInstant.now < deadline {
            _ = Poll.wait([physical.outputReadyDescriptor], timeout: .milliseconds(20))
            for report in physical.takeOutputs() where report.first == SwitchProReports.rumbleOutputID && report.count == SwitchProReports.length {
                reports.append((.now, HDSide(report[2..<6]), HDSide(report[6..<10])))
            }
            if !game.isRunning, let last = reports.last, last.left.silent, MonotonicInstant.now - last.at > .milliseconds(300) { break }
        }
        game.waitUntilExit()
        let sounding = reports.filter { !$0.left.silent || !$0.right.silent }
        XCTAssertFalse(sounding.isEmpty, "no HD rumble reached the Switch Pro; forward said \(forward.snapshot().suffix(5))")
        // The bursts by their band: 150 Hz on the low band, 300 Hz on the high band (a loaded
        // guest's host pad stalls mid-burst at times: the lease then ends it, and it resumes).
        let groups = [sounding.filter { $0.left.lowCode > 0 }, sounding.filter { $0.left.highCode > 0 }]
        print("haptics on a Switch Pro: \(groups.map { g in g.isEmpty ? "none" : "\(g.count) reports over \(g.last!.at - g.first!.at), e.g. left \(g[g.count / 2].left), right \(g[g.count / 2].right)" })")
        XCTAssertEqual(groups[0].count + groups[1].count, sounding.count, "every sounding report on one band: \(sounding.map { "\($0.left)" })")
        XCTAssertFalse(groups[0].isEmpty || groups[1].isEmpty, "a run of reports for each burst")
        guard !groups[0].isEmpty, !groups[1].isEmpty else { return }
        XCTAssertLessThan(groups[0].last!.at, groups[1].first!.at, "the 150 Hz burst before the 300 Hz one")
        let first = groups[0][groups[0].count / 2], second = groups[1][groups[1].count / 2]
        XCTAssertEqual(first.left.lowHz, 150, accuracy: 150 * 0.025, "150 Hz on the left's low band")
        XCTAssertGreaterThanOrEqual(first.left.lowCode, 95, "the left coil at full scale")
        XCTAssertEqual(first.left.highCode, 0)
        XCTAssertEqual(first.right.lowHz, 150, accuracy: 150 * 0.025)
        XCTAssertEqual(Double(first.right.lowCode), 68, accuracy: 4, "the right coil at half: amplitude 0.5 is code 68")
        for side in [second.left, second.right] {
            XCTAssertEqual(side.highHz, 300, accuracy: 300 * 0.025, "300 Hz on the high band")
            XCTAssertGreaterThanOrEqual(side.highCode, 95)
            XCTAssertEqual(side.lowCode, 0)
        }
        for group in groups {
            XCTAssertGreaterThan(group.count, 3, "renewed while the burst lasts")
            // Read in 20 ms polls, so counted rather than spaced: no faster than one per 20 ms.
            XCTAssertLessThanOrEqual(Double(group.count), (group.last!.at - group.first!.at) / .milliseconds(20) + 3, "faster than the pad takes")
        }
        let last = try XCTUnwrap(reports.last)
        XCTAssertTrue(last.left.silent && last.right.silent, "the actuators did not end neutral")
    }

    // MARK: padgate haptics on pads without voice coils

    /// `padgate haptics --tone` on a DualShock 4: the tone's loudness on both motors while it
    /// plays (0.6 of full scale: 153 of 255), stopped at its end.
    func testTheHapticsCommandPlaysOnADualShock4sMotors() throws {
        let motors = LockedBox<[Motors]>([])
        let physical = try EmulatedPlayStationPad(kind: .dualShock4, bus: .usb, onOutput: { report in
            guard let levels = (try? DualShock4OutputDecoder.decode(report))?.motors else { return }
            motors.update { $0.append(Motors(at: .now, levels: levels)) }
        })
        defer { physical.stop() }
        let pad = try XCTUnwrap(padFor(physical, udev: try Udev()))
        let started = MonotonicInstant.now
        let run = try padgate(["haptics", "--pad", pad.evdev[0].path, "--tone", "150", "--for", "400ms", "--amplitude", "0.6"])
        XCTAssertEqual(run.status, 0, run.stderr)
        _ = eventually(timeout: .seconds(2)) { motors.value.last?.levels.isSilent == true ? true : nil }
        let reports = motors.value
        print("padgate haptics on a DualShock 4: \(reports.map { "\($0.levels) at \($0.at - started)" })")
        let sums = reports.map { Int($0.levels.low) + Int($0.levels.high) }
        let loudest = sums.indices.max { sums[$0] < sums[$1] }.map { reports[$0].levels }
        XCTAssertEqual(Double(loudest?.low ?? 0), 153, accuracy: 8, "0.6 of full scale on the strong motor")
        XCTAssertEqual(Double(loudest?.high ?? 0), 153, accuracy: 8, "and on the weak one")
        XCTAssertTrue(reports.last?.levels.isSilent ?? false, "the motors did not stop at the end")
    }

    /// `padgate haptics --tone 300` on a Switch Pro: its HD rumble at 300 Hz on the high bands,
    /// ending neutral.
    func testTheHapticsCommandPlaysOnASwitchProsHDRumbleAtTheTonesFrequency() throws {
        let physical = try EmulatedSwitchPro(calibration: EmulatedSwitchProTests.calibration)
        defer { physical.stop() }
        let pad = try XCTUnwrap(EmulatedSwitchProTests.padFor(physical, udev: try Udev()))
        _ = physical.takeOutputs()
        let run = try padgate(["haptics", "--pad", try XCTUnwrap(pad.gamepadNode?.path), "--tone", "300", "--for", "300ms"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let frames = physical.takeOutputs().filter { $0.first == SwitchProReports.rumbleOutputID && $0.count == SwitchProReports.length }
            .map { (HDSide($0[2..<6]), HDSide($0[6..<10])) }
        let sounding = frames.filter { !$0.0.silent || !$0.1.silent }
        print("padgate haptics on a Switch Pro: \(sounding.count) sounding reports of \(frames.count), e.g. \(sounding.dropFirst(sounding.count / 2).first.map { "\($0.0)" } ?? "none")")
        XCTAssertGreaterThan(sounding.count, 3)
        for (left, right) in sounding.dropFirst().dropLast() {
            for side in [left, right] {
                XCTAssertEqual(side.highHz, 300, accuracy: 300 * 0.025, "300 Hz on the high band")
                XCTAssertGreaterThanOrEqual(side.highCode, 95)
            }
        }
        XCTAssertTrue(frames.last.map { $0.0.silent && $0.1.silent } ?? false, "the actuators did not end neutral")
    }
}
