import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import XCTest

/// The physical pad's microphone as the host pad's, against the real kernel: the physical pad is
/// an emulated USB DualSense whose microphone gives a 440 Hz tone (snd-usb-audio's capture takes
/// its isochronous IN packets), `serve --virtual usb` makes the host's USB DualSense, and
/// `arecord` records from the host pad's card, as any program there would.
///
/// Privacy is part of the feature: the client records the pad's microphone only while a program
/// on the host records from the host pad (the host's request is a lease), so before `arecord`
/// and a lease after it the physical pad's microphone is not read at all.
final class MicrophoneForwardingTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
    }

    func testThePadsMicrophoneIsTheHostPadsWhileAProgramRecordsAndOnlyThen() throws {
        // The microphone's packets as the physical pad's driver takes them: the tone, continuous
        // across packets, and how many were taken.
        let taken = LockedBox<(packets: Int, frames: Int)>((0, 0))
        // One second of the tone (440 whole periods), both channels: each packet is a copy from it.
        let tone: [Int16] = (0..<48_000).flatMap { i in Array(repeating: Int16(sin(2 * .pi * 440 * Double(i) / 48_000) * 12_000), count: 2) }
        let physical = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb, onAudioIn: { packet in
            let frames = packet.count / 4
            let start = taken.withLock { t -> Int in
                defer { t.packets += 1; t.frames += frames }
                return t.frames
            } % 48_000
            tone.withUnsafeBytes { tone in
                let first = min(frames, 48_000 - start)
                packet.copyMemory(from: UnsafeRawBufferPointer(rebasing: tone[(4 * start)..<(4 * (start + first))]))
                if first < frames {
                    UnsafeMutableRawBufferPointer(rebasing: packet[(4 * first)...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: tone[0..<(4 * (frames - first))]))
                }
            }
        })
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        XCTAssertNotNil(eventually(timeout: .seconds(20)) { udev.soundCard(of: physicalPad) }, "snd-usb-audio made no card for the physical pad")
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-microphone-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        let port = String(28_300 + Int.random(in: 0..<100))
        let serve = try startPairedServe(["--virtual", "usb", "--log-level", "debug"], host: "127.0.0.1", port: port)
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--microphone", "--quiet", "--log-level", "debug"],
                                         includeStandardError: true)
        defer { forward.interrupt(); serve.interrupt() }
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.pads().first { $0.isHostVirtualPad && $0.bus == .usb } },
                                    "the host never made its USB DualSense: \(serve.snapshot())")
        let hostCard = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: hostPad) })

        // Nobody records on the host: the pad's microphone is not read.
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(taken.value.packets, 0, "the client read the pad's microphone while nobody on the host recorded")

        // A program records 2 s from the host pad.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-microphone-\(UUID()).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        let recordingStarted = MonotonicInstant.now
        try shell("arecord -q -D hw:\(hostCard),0 -c 2 -r 48000 -f S16_LE -t raw -d 2 \(file.path)")
        let recordingEnded = MonotonicInstant.now
        print("microphone: the physical pad gave \(taken.value.frames) frames in \(taken.value.packets) packets while the host recorded for \(recordingEnded - recordingStarted)")
        let bytes = [UInt8](try Data(contentsOf: file))
        let samples = stride(from: 0, to: bytes.count - 1, by: 2).map { Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
        // In 10 ms windows (480 frames, 4.4 periods of 440 Hz): a sounding window peaks near
        // 12,000 and has 4 or 5 rising zero crossings. Idle, all but the first ~100 ms (the
        // request, the pad's stream starting, the allowance) of the 200 windows sound; loaded, at
        // least 40 %.
        for c in 0...1 {
            let channel = stride(from: c, to: samples.count, by: 2).map { samples[$0] }
            var sounding = 0, whole = 0, rising = 0, peak = 0
            for start in stride(from: 1, to: channel.count - 480, by: 480) {
                let window = channel[(start - 1)..<(start + 480)]
                let top = window.map(abs).max() ?? 0
                peak = max(peak, top)
                guard top > 6_000 else { continue }
                sounding += 1
                // The frequency from whole windows only: a window the tone starts or stops in has fewer crossings.
                guard window.filter({ $0 == 0 }).count <= 5 else { continue }
                whole += 1
                rising += zip(window, window.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
            }
            let perWindow = whole == 0 ? 0 : Double(rising) / Double(whole)
            if c == 0 {
                // Where the tone is whole, cut or missing, 10 ms a character (for the log).
                let map = stride(from: 1, to: channel.count - 480, by: 480).map { start -> Character in
                    let window = channel[(start - 1)..<(start + 480)]
                    let zeros = window.filter { $0 == 0 }.count
                    return zeros > 400 ? "." : zeros > 5 ? "+" : "#"
                }
                print("microphone over the link: \(String(map))")
            }
            print("microphone over the link, channel \(c): \(sounding) of 200 windows of 10 ms sounding (\(whole) whole), peak \(peak) of 12000, \(perWindow) rising crossings a window (440 Hz: 4.4)")
            XCTAssertGreaterThanOrEqual(sounding, 80, "channel \(c): the pad's microphone reached the host's; forward said \(forward.snapshot().suffix(6))")
            XCTAssertEqual(Double(peak), 12_000, accuracy: 2_500, "channel \(c): its level")
            XCTAssertEqual(perWindow, 4.4, accuracy: 0.6, "channel \(c): 440 Hz")
        }

        // The recording ended: the host says stop once no packet is taken for 200 ms, and the
        // client stops recording (a lost stop would end with the 2 s lease).
        // When the client started and stopped recording, from its debug log (the guest's one clock).
        func logged(_ marker: String, by process: PadgateProcess? = nil) -> MonotonicInstant? {
            (process ?? forward).snapshot().lazy.compactMap { line -> MonotonicInstant? in
                guard let range = line.range(of: marker) else { return nil }
                return line[range.upperBound...].split(separator: " ").first.flatMap { Int64($0) }.map { MonotonicInstant(nanoseconds: $0 * 1000) }
            }.first
        }
        let stopped = try XCTUnwrap(eventually(timeout: .seconds(5)) { logged("microphone stopped recording at ") },
                                    "the client never stopped recording the pad's microphone: \(forward.snapshot().suffix(6))")
        let started = try XCTUnwrap(logged("microphone for the host from "))
        let asked = try XCTUnwrap(logged("asking its client for the pad's microphone at ", by: serve), "the host never said it asked")
        print("microphone: the host asked \(asked - recordingStarted) after arecord was started, the client recorded from \(started - asked) after the host asked to \(stopped - recordingEnded) after the recording ended; \((serve.snapshot() + forward.snapshot()).filter { $0.contains("microphone") })")
        // padgate's rules, not how fast the guest starts arecord (0.8 s of a loaded run once): the
        // host asks only once a program records, and the client starts within half the lease.
        XCTAssertGreaterThan(asked, recordingStarted, "the host asked for the microphone before a program recorded")
        XCTAssertLessThan(asked, recordingEnded, "the host asked while the program recorded")
        XCTAssertGreaterThanOrEqual(started, asked, "the client recorded before the host asked")
        XCTAssertLessThan(started - asked, .seconds(1), "the client started recording when the host asked")
        XCTAssertLessThan(stopped - recordingEnded, .milliseconds(1200), "the host's stop, not the lease, ended the recording")
        // And the pad's microphone is read no more.
        let quiet = eventually(timeout: .seconds(5)) { () -> Bool? in
            let before = taken.value.packets
            Thread.sleep(forTimeInterval: 0.3)
            return taken.value.packets == before ? true : nil
        }
        XCTAssertNotNil(quiet, "the pad's microphone was still read after the client stopped")
        unsetenv("PADGATE_STATE_DIR")
    }
}
