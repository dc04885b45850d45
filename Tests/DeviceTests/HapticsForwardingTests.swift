import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import TestDecoders
import XCTest

/// A game's HD haptics across the link, against the real kernel: `serve --virtual usb` makes the
/// host's DualSense a USB device with its audio function (snd-usb-audio binds it), `aplay` plays
/// a known 4-channel signal into that card, and the physical pad behind `padgate forward` (an
/// emulated DualSense) receives it on its voice coils: as output report 0x32 over Bluetooth
/// (read by a decoder written from the documented layout, `TestDecoders`), or as its own USB
/// audio over USB (channels 2-3 of the isochronous OUT samples it is sent).
///
/// The signal: 100 ms of silence, 300 ms of 150 Hz (left coil at full scale, right at half),
/// 200 ms of silence, 300 ms of 300 Hz on both, 200 ms of silence; the headphone pair (0-1)
/// carries a 1 kHz tone throughout, which must never reach the coils.
final class HapticsForwardingTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
    }

    var state: URL!
    override func setUp() { state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-haptics-\(UUID())") }

    /// Where each part of the signal starts, in ms.
    static let burst150 = 100, burst300 = 600, length = 1100

    static func signalFile() throws -> URL {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length * 48 * 8)
        for f in 0..<(length * 48) {
            let ms = f / 48, t = Double(f) / 48_000
            var left = 0.0, right = 0.0
            if (burst150..<burst150 + 300).contains(ms) { left = sin(2 * .pi * 150 * t); right = left / 2 }
            if (burst300..<burst300 + 300).contains(ms) { left = sin(2 * .pi * 300 * t); right = left }
            let headphones = Int16(sin(2 * .pi * 1000 * t) * 30_000)
            for sample in [headphones, headphones, Int16(left * 32_767), Int16(right * 32_767)] {
                bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
            }
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-haptics-\(UUID()).raw")
        try Data(bytes).write(to: url)
        return url
    }

    /// The forwarding pair with the host's pad on USB; its sound card once snd-usb-audio made it.
    func forwarding(_ physicalPad: Pad) throws -> (serve: PadgateProcess, forward: PadgateProcess, card: Int) {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        let port = String(48_000 + Int.random(in: 0..<100))
        let serve = try startPairedServe(["--virtual", "usb", "--log-level", "debug"], host: "127.0.0.1", port: port)
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet", "--log-level", "debug"],
                                         includeStandardError: true)
        addTeardownBlock {
            // What both ends measured of each haptics stream, for the log.
            for line in serve.snapshot() + forward.snapshot() where line.contains("haptics") { print(line) }
        }
        let udev = try Udev()
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.pads().first { $0.isHostVirtualPad && $0.bus == .usb } },
                                    "the host never made its USB DualSense: \(serve.snapshot())")
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: hostPad) }, "snd-usb-audio made no card for the host's pad")
        return (serve, forward, card)
    }

    /// The game: aplay into the host pad's card, as any ALSA program plays there.
    func play(_ file: URL, card: Int) throws -> MonotonicInstant {
        let started = MonotonicInstant.now
        try shell("aplay -q -D hw:\(card),0 -c 4 -r 48000 -f S16_LE -t raw \(file.path)")
        return started
    }

    struct Frame { let at: MonotonicInstant; let left: Int8; let right: Int8 }

    /// The sound of one burst: where it starts (the first frame above the noise floor) and its frames.
    func burst(in frames: [Frame], after start: Int, threshold: Int = 20) -> (start: Int, frames: ArraySlice<Frame>)? {
        guard let first = frames[start...].firstIndex(where: { abs(Int($0.left)) > threshold }) else { return nil }
        // It ends where 30 ms (90 frames) pass with nothing above the floor.
        var end = first, quiet = 0
        while end < frames.count, quiet < 90 {
            quiet = abs(Int(frames[end].left)) > threshold ? 0 : quiet + 1
            end += 1
        }
        return (first, frames[first..<end - quiet])
    }

    /// The share of frames within a burst's middle that equal (within 2) the frame a period later.
    func periodic(_ frames: ArraySlice<Frame>, period: Int) -> Double {
        let middle = Array(frames.dropFirst(60).dropLast(60))
        guard middle.count > period else { return 0 }
        let matches = zip(middle, middle.dropFirst(period)).filter { abs(Int($0.left) - Int($1.left)) <= 2 }.count
        return Double(matches) / Double(middle.count - period)
    }

    func testAGamesHapticsReachABluetoothPadsCoilsAsReports() throws {
        // Each report as the pad's driver end receives it, with when.
        let received = LockedBox<[(at: MonotonicInstant, report: [UInt8])]>([])
        let physical = try EmulatedPlayStationPad(bus: .bluetooth, onOutput: { report in
            guard report.first == DualSenseHapticsReader.reportID else { return }
            received.update { if $0.count < 10_000 { $0.append((.now, report)) } }
        })
        defer { physical.stop() }
        let physicalPad = try XCTUnwrap(padFor(physical, udev: try Udev()))
        let (serve, forward, card) = try forwarding(physicalPad)
        defer { forward.interrupt(); serve.interrupt() }
        let file = try Self.signalFile()
        defer { try? FileManager.default.removeItem(at: file) }

        let started = try play(file, card: card)
        // Until the coils have been silent a while after the game ended.
        _ = eventually(timeout: .seconds(5), expiryIsExpected: true) { () -> Bool? in
            guard let last = received.value.last, MonotonicInstant.now - last.at > .milliseconds(300) else { return nil }
            return true
        }
        var frames: [Frame] = []
        var reports: [DualSenseHapticsReader.Decoded] = []
        for (at, report) in received.value {
            let decoded = try DualSenseHapticsReader.decode(report)   // CRC, layout: every field checked
            reports.append(decoded)
            for i in 0..<decoded.left.count {
                frames.append(Frame(at: at + .microseconds(Int64(i) * 333), left: decoded.left[i], right: decoded.right[i]))
            }
        }
        XCTAssertFalse(reports.isEmpty, "no haptics report reached the pad; forward said \(forward.snapshot())")
        XCTAssertEqual(reports.map(\.counter), reports.indices.map { UInt8(truncatingIfNeeded: $0 + Int(reports[0].counter)) },
                       "the reports count up, across streams too")

        let first = try XCTUnwrap(burst(in: frames, after: 0), "the 150 Hz burst never arrived")
        let second = try XCTUnwrap(burst(in: frames, after: first.start + first.frames.count), "the 300 Hz burst never arrived")
        // Whole: 300 ms is 900 frames at 3 kHz; a block lost on the way is concealed, not dropped.
        XCTAssertEqual(Double(first.frames.count), 900, accuracy: 45, "150 Hz burst length")
        XCTAssertEqual(Double(second.frames.count), 900, accuracy: 45, "300 Hz burst length")
        // Level: the 48 kHz to 3 kHz mean keeps 150 Hz at 0.996 and 300 Hz at 0.984 of full scale.
        XCTAssertGreaterThanOrEqual(first.frames.map { abs(Int($0.left)) }.max() ?? 0, 120)
        XCTAssertEqual(Double(first.frames.map { abs(Int($0.right)) }.max() ?? 0), 63, accuracy: 4, "the right coil at half")
        XCTAssertGreaterThanOrEqual(second.frames.map { abs(Int($0.left)) }.max() ?? 0, 118)
        // Spectrum: a period of 20 frames (150 Hz) and 10 (300 Hz).
        XCTAssertGreaterThan(periodic(first.frames, period: 20), 0.95)
        XCTAssertGreaterThan(periodic(second.frames, period: 10), 0.95)
        XCTAssertLessThan(periodic(first.frames, period: 10), 0.2, "150 Hz is not 300 Hz")
        // The headphone pair's 1 kHz never reaches the coils: the silences are silent.
        let gap = frames[(first.start + first.frames.count + 60)..<(second.start - 60)]
        XCTAssertTrue(gap.allSatisfy { $0.left == 0 && $0.right == 0 }, "sound between the bursts")
        // Timing: the second burst arrives 500 ms after the first, as it was played; the latency
        // from the game's start (ALSA's start, the host's pad, the link, the playout) is bounded.
        let spacing = frames[second.start].at - frames[first.start].at
        XCTAssertEqual(Double(spacing / .milliseconds(1)), 500, accuracy: 60, "the bursts' spacing")
        let latency = frames[first.start].at - (started + .milliseconds(Self.burst150))
        print("haptics over Bluetooth: first burst \(latency) after it was played (spacing \(spacing))")
        XCTAssertLessThan(latency, .seconds(2))
        // The coils end silent.
        XCTAssertTrue(reports.last.map { $0.left.allSatisfy { $0 == 0 } && $0.right.allSatisfy { $0 == 0 } } ?? false, "the last report is not silence")
    }

    func testAGamesHapticsReachAUSBPadsCoilsAsItsOwnAudio() throws {
        // Every packet's samples, and when each packet arrived (by its first byte's offset).
        let audio = LockedBox<(bytes: [UInt8], sound: [MonotonicInstant], packets: [(at: MonotonicInstant, offset: Int)])>(([], [], []))
        let physical = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb, idleRepeat: EmulatedPlayStationPad.idleReportInterval,
                                                  onAudioOut: { packet in
            audio.update { state in
                guard state.bytes.count < 16 << 20 else { return }
                if packet.contains(where: { $0 != 0 }) { state.sound.append(.now) }
                state.packets.append((.now, state.bytes.count))
                state.bytes += packet
            }
        })
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        XCTAssertNotNil(eventually(timeout: .seconds(20)) { udev.soundCard(of: physicalPad) }, "snd-usb-audio made no card for the physical pad")
        let (serve, forward, card) = try forwarding(physicalPad)
        defer { forward.interrupt(); serve.interrupt() }
        let file = try Self.signalFile()
        defer { try? FileManager.default.removeItem(at: file) }

        audio.update { $0 = ([], [], []) }
        _ = try play(file, card: card)
        // Until the physical pad's stream has carried silence for a while after the sound.
        _ = eventually(timeout: .seconds(5), expiryIsExpected: true) { () -> Bool? in
            guard let last = audio.value.sound.last else { return nil }
            return MonotonicInstant.now - last > .milliseconds(500) ? true : nil
        }
        let bytes = audio.value.bytes
        let samples = stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        let count = samples.count / 4
        func channel(_ c: Int) -> [Int16] { (0..<count).map { samples[4 * $0 + c] } }
        XCTAssertTrue(channel(0).allSatisfy { $0 == 0 } && channel(1).allSatisfy { $0 == 0 }, "the physical pad's headphone pair is silent")
        let left = channel(2), right = channel(3)
        let start = try XCTUnwrap(left.firstIndex { abs(Int($0)) > 2000 }, "no haptics reached the USB pad's coils (\(count) frames)")
        // The 150 Hz burst at 48 kHz: 300 ms is 14400 frames; 3 kHz upsampled keeps its level and period.
        let end = try XCTUnwrap(left[start...].indices.first { i in i + 480 < left.count && left[i..<i + 480].allSatisfy { abs(Int($0)) <= 2000 } })
        XCTAssertEqual(Double(end - start), 14_400, accuracy: 720, "150 Hz burst length at 48 kHz")
        let middle = Array(left[(start + 960)..<(end - 960)])
        XCTAssertGreaterThanOrEqual(middle.map { abs(Int($0)) }.max() ?? 0, 30_000)
        XCTAssertEqual(Double(right[(start + 960)..<(end - 960)].map { abs(Int($0)) }.max() ?? 0), 16_254, accuracy: 1100, "the right coil at half")
        let matches = zip(middle, middle.dropFirst(320)).filter { abs(Int($0) - Int($1)) <= 600 }.count
        XCTAssertGreaterThan(Double(matches) / Double(middle.count - 320), 0.95, "a period of 320 frames: 150 Hz")
        // The 300 Hz burst reaches the pad 500 ms after the first, as it was played, ± 60 ms
        // (the pad's stream itself pauses between them: the client ends it when the sound does).
        let next = try XCTUnwrap(left[end...].firstIndex { abs(Int($0)) > 2000 }, "the 300 Hz burst never arrived")
        let packets = audio.value.packets
        func arrival(ofFrame frame: Int) -> MonotonicInstant { packets.last { $0.offset <= frame * 8 }!.at }
        let spacing = arrival(ofFrame: next) - arrival(ofFrame: start)
        print("haptics over USB: the bursts \(spacing) apart at the pad")
        XCTAssertEqual(Double(spacing / .milliseconds(1)), 500, accuracy: 60, "the bursts' spacing")
        XCTAssertTrue(left[(end + 480)..<(next - 480)].allSatisfy { $0 == 0 }, "sound between the bursts")
    }

    /// A host killed mid-haptics: the client's playout conceals at most 30 ms, then the coils go
    /// silent, well within 100 ms of the last block it had.
    func testAKilledHostLeavesTheCoilsSilent() throws {
        let physical = try EmulatedPlayStationPad(bus: .bluetooth)
        defer { physical.stop() }
        let physicalPad = try XCTUnwrap(padFor(physical, udev: try Udev()))
        let (serve, forward, card) = try forwarding(physicalPad)
        defer { forward.interrupt(); serve.interrupt() }
        let game = Process()
        game.executableURL = URL(fileURLWithPath: "/bin/sh")
        game.arguments = ["-c", "exec aplay -q -D hw:\(card),0 -c 4 -r 48000 -f S16_LE -t raw /dev/urandom"]
        try game.run()
        defer { if game.isRunning { game.terminate() } }
        let sounding = physical.waitForOutput(timeout: .seconds(10)) { report in
            report.first == DualSenseHapticsReader.reportID && ((try? DualSenseHapticsReader.decode(report))?.left.contains { $0 != 0 } ?? false)
        }
        XCTAssertNotNil(sounding, "the noise never reached the coils")
        _ = physical.takeOutputs()
        kill(serve.process.processIdentifier, SIGKILL)
        let killed = MonotonicInstant.now
        var lastSound: MonotonicInstant?
        var silentAfter = false
        while MonotonicInstant.now - killed < .seconds(2) {
            _ = Poll.wait([physical.outputReadyDescriptor], timeout: .milliseconds(20))
            for report in physical.takeOutputs() where report.first == DualSenseHapticsReader.reportID {
                let decoded = try DualSenseHapticsReader.decode(report)
                if (decoded.left + decoded.right).contains(where: { $0 != 0 }) { lastSound = .now; silentAfter = false } else { silentAfter = true }
            }
        }
        XCTAssertTrue(silentAfter, "the coils did not end silent")
        if let lastSound {
            print("haptics: the last sound reached the pad \(lastSound - killed) after the host was killed")
            XCTAssertLessThan(lastSound - killed, .milliseconds(150), "sound went on after the host died")
        }
    }
}
