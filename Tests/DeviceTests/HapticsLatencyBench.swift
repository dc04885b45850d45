import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import TestDecoders
import XCTest

/// How long a game's haptics take to reach the physical pad, in one boot, beside the kernel's own
/// floor (`make bench-haptics` prints these figures): a "game" (ALSA, 5 ms periods, 20 ms queued)
/// writes a 5 ms click into the host USB DualSense's card every 100 ms; each click's arrival in
/// the Bluetooth pad's 0x32 reports is timed from the write that carried it.
///
/// - **floor, audio**: the same game writing into an emulated USB pad's card directly, timed to
///   the pad's isochronous OUT packet (ALSA, snd-usb-audio, vhci-hcd: what any USB pad costs);
/// - **floor, report**: a 0x32 report written to the Bluetooth pad's hidraw node, timed to the
///   pad (hidraw, uhid);
/// - **added by padgate**: the total less both floors, p50 and p99.
///
/// A benchmark, not a test: `make bench-haptics` runs it in the guest (tools/test-devices.sh
/// leaves classes named `…Bench` out of the suite). It asserts only that it measured: every
/// click arrives once. Unloaded, padgate adds a few tens of ms over the floors: the playout's
/// 20 ms allowance, a report's 10.7 ms and the 5 ms block.
final class HapticsLatencyBench: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
    }

    static let clicks = 30
    static let spacing = 20   // periods of 5 ms: a click every 100 ms

    /// The game: `clicks` clicks into `card`, one every 100 ms; when each click's write began.
    /// 20 ms queued, as games keep (less underruns in a busy guest).
    func playClicks(card: Int) throws -> [MonotonicInstant] {
        let playback = try ALSAPlayback(card: card, channels: 4, rate: 48_000, latency: .milliseconds(20))
        var silence = [Int16](repeating: 0, count: 240 * 4)
        var click = silence
        for i in 0..<240 {
            let value = Int16(sin(2 * Double.pi * 200 * Double(i) / 48_000) * 30_000)
            click[4 * i + 2] = value; click[4 * i + 3] = value
        }
        var written: [MonotonicInstant] = []
        for period in 0..<(Self.clicks * Self.spacing + 40) {
            let isClick = period % Self.spacing == 10 && written.count < Self.clicks
            if isClick { written.append(.now) }
            _ = try (isClick ? click : silence).withUnsafeBufferPointer { try playback.write($0) }
        }
        try playback.finish()
        silence.removeAll()
        return written
    }

    func percentile(_ values: [Duration], _ p: Double) -> Duration {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p + 0.5))]
    }
    func ms(_ d: Duration) -> String { String(format: "%.1f ms", Double(d / .microseconds(1)) / 1000) }

    /// What the pad received, when: a packet or report, whether it sounds, how long it plays.
    typealias Event = (at: MonotonicInstant, sound: Bool, lasts: Duration)

    /// Arrivals of sound after silence: a click's first sounding moment each. Silence is counted
    /// in what the stream played (a report's or 10 ms of it: a click has none inside, and a late
    /// output that plays a click late catches up in the silence after it), not in arrival times:
    /// a pad's device thread held up on a loaded machine takes what queued meanwhile at once, so
    /// two clicks can arrive closer together than they play.
    func onsets(_ events: [Event]) -> [MonotonicInstant] {
        var onsets: [MonotonicInstant] = []
        var silence: Duration?
        for event in events {
            guard event.sound else { silence = silence.map { $0 + event.lasts }; continue }
            if silence.map({ $0 >= .milliseconds(10) }) ?? true { onsets.append(event.at) }
            silence = .zero
        }
        return onsets
    }

    /// The pad's stream as runs of sound (when each arrived after the game's first write, where
    /// it sits in the stream, how long it played and the silence before it), beside the game's
    /// writes: which click split or merged, and whether the pad's stream or its arrival did it.
    func printSoundRuns(_ events: [Event], since start: MonotonicInstant, writes: [MonotonicInstant]) {
        var runs: [String] = []
        var position = Duration.zero, silence = Duration.zero, run: (at: MonotonicInstant, from: Duration, lasts: Duration)?
        func end() {
            guard let r = run else { return }
            runs.append("\(ms(r.at - start)) at stream \(ms(r.from)) for \(ms(r.lasts))")
            run = nil
        }
        for event in events {
            if event.sound {
                if run == nil { runs.append("silence \(ms(silence))"); run = (event.at, position, .zero) }
                run?.lasts += event.lasts
                silence = .zero
            } else {
                end()
                silence += event.lasts
            }
            position += event.lasts
        }
        end()
        print("haptics latency: the game's writes after its first: \(writes.map { ms($0 - start) }.joined(separator: ", "))")
        print("haptics latency: the pad's sound: \(runs.suffix(130).joined(separator: ", "))")
    }

    /// Floor, audio: the game straight into a USB pad's card, each click timed to the pad's
    /// isochronous OUT packet.
    func audioFloor(_ udev: Udev) throws -> [Duration] {
        let floorEvents = LockedBox<[Event]>([])
        let usbPad = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb, onAudioOut: { packet in
            let sound = packet.contains { $0 != 0 }
            floorEvents.update { if $0.count < 100_000 { $0.append((.now, sound, DualSenseUSBAudioReader.duration(ofPacketBytes: packet.count))) } }
        })
        defer { usbPad.stop() }
        let found = padFor(usbPad, udev: udev)
        // What the kernel said meanwhile (a USB pad made right after another test's three).
        if found == nil {
            print("haptics latency: the floor's USB pad (uniq \(usbPad.uniq)) never appeared; the pads: "
                  + udev.pads().map { "\($0.uniq) \($0.bus) \($0.evdev.map(\.role)) hidraw \($0.hidraw ?? "-") \($0.capabilities)" }.joined(separator: "; "))
            print("haptics latency: the kernel's last lines:\n" + ((try? shell("dmesg 2>&1 | tail -40")) ?? "-"))
        }
        let usbNode = try XCTUnwrap(found, "the floor's USB pad appeared")
        let usbCard = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: usbNode) })
        let floorWrites = try playClicks(card: usbCard)
        usbPad.stop()
        let floorOnsets = onsets(floorEvents.value)
        XCTAssertEqual(floorOnsets.count, Self.clicks, "the floor's clicks")
        return zip(floorWrites, floorOnsets).map { $1 - $0 }
    }

    /// The game's clicks into the host's USB DualSense while `physicalPad` is forwarded to it;
    /// each click's arrival at the pad is an onset in `events`. Prints the total, the added part
    /// (the total less `floor`) and the stages.
    /// - Parameter loss: host and client in two network namespaces, the host's side (the haptics'
    ///   direction) under this netem loss once the pad is up; nil: loopback.
    func clicksAcrossPadgate(_ physicalPad: Pad, events: LockedBox<[Event]>, floor: Duration, floorName: String,
                             loss: String? = nil) throws {
        let udev = try Udev()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-hlat-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let link = try loss.map { _ in try NamespacePair(tag: "pb", prefix: "10.79.0") }
        defer { link?.remove() }
        let address = link?.hostAddress ?? "127.0.0.1"
        let port = String(28_200 + Int.random(in: 0..<100))
        let serve = try startPairedServe(["--virtual", "usb", "--log-level", "debug"], host: address, port: port,
                                         serveNamespace: link?.host, clientNamespace: link?.client)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "\(address):\(port)", "--pad", physicalPad.evdev[0].path, "--quiet", "--log-level", "debug"],
                                         namespace: link?.client, includeStandardError: true)
        defer { forward.interrupt() }
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.pads().first { $0.isHostVirtualPad && $0.bus == .usb } })
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: hostPad) })
        if let link, let loss { try link.netem(.host, loss) }
        events.update { $0.removeAll() }
        let writes = try playClicks(card: card)
        _ = eventually(timeout: .seconds(3), expiryIsExpected: true) { onsets(events.value).count >= Self.clicks ? true : nil }
        let arrivals = onsets(events.value)
        // Every click arrived: the nth arrival is the nth click (they cannot overtake each other;
        // taking the latest click written before each arrival named the next click for every
        // one played more than 100 ms late, and reported 110 ms as 8). Otherwise that rule, so
        // a click that does not arrive shifts no other's figure.
        let totals = arrivals.count == writes.count ? zip(arrivals, writes).map { $0 - $1 }
            : arrivals.compactMap { arrival in writes.last { $0 < arrival }.map { arrival - $0 } }
        print("haptics latency\(loss.map { " under \($0)" } ?? ""): \(arrivals.count) of \(Self.clicks) clicks arrived")
        if arrivals.count != Self.clicks, let first = writes.first { printSoundRuns(events.value, since: first, writes: writes) }
        if loss == nil {
            XCTAssertEqual(arrivals.count, Self.clicks, "every click arrives, once")
        } else {
            // A click is one or two 5 ms blocks: one whose blocks were all lost has nothing to
            // conceal it with (concealment repeats the burst playing), so it does not arrive.
            XCTAssertGreaterThanOrEqual(arrivals.count, Self.clicks / 2, "most clicks arrive")
        }
        guard !totals.isEmpty else { return XCTFail("no click arrived") }
        let added = totals.map { $0 - floor }
        print("haptics latency (game's write to the pad, \(totals.count) clicks): p50 \(ms(percentile(totals, 0.5))), p99 \(ms(percentile(totals, 0.99)))")
        print("haptics latency floor: \(floorName): \(ms(floor))")
        print("haptics latency added by padgate: p50 \(ms(percentile(added, 0.5))), p99 \(ms(percentile(added, 0.99)))")
        if let link { print("haptics latency under \(loss ?? ""): \(try link.dropped(.host).count) datagrams dropped by netem") }
        stages(serve: serve, forward: forward, arrivals: arrivals)
    }

    func testAGamesClickReachesThePadWithinItsBoundsBesideTheKernelsFloor() throws {
        try bluetoothClicks(loss: nil)
    }

    /// The same under 5 % loss on the haptics' direction: every click still arrives (concealed
    /// where its first block was lost), and the figures sit beside the lossless ones.
    func testAGamesClickUnderFivePercentLoss() throws {
        if let reason = NamespacePair.unavailableReason { try skipLoudly(reason) }
        try bluetoothClicks(loss: "loss 5%")
    }

    /// A USB pad's own coils (channels 2-3 of its card, the client's stream open on silence
    /// between clicks): each click timed to the physical pad's first isochronous packet carrying
    /// it. The floor is the audio floor twice: the game's write to the host pad's packet, and the
    /// client's write to the physical pad's packet.
    func testAGamesClickReachesAUSBPadsOwnCoils() throws {
        let udev = try Udev()
        let audioFloor = try audioFloor(udev)
        let packets = LockedBox<[Event]>([])
        let physical = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb, onAudioOut: { packet in
            let sound = DualSenseUSBAudioReader.coilsSound(packet)
            packets.update { if $0.count < 200_000 { $0.append((.now, sound, DualSenseUSBAudioReader.duration(ofPacketBytes: packet.count))) } }
        })
        defer { physical.stop() }
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        XCTAssertNotNil(eventually(timeout: .seconds(20)) { udev.soundCard(of: physicalPad) }, "snd-usb-audio made no card for the physical pad")
        print("haptics latency floor parts: audio (write to a USB pad's packet) p50 \(ms(percentile(audioFloor, 0.5))), p99 \(ms(percentile(audioFloor, 0.99)))")
        try clicksAcrossPadgate(physicalPad, events: packets, floor: percentile(audioFloor, 0.5) * 2, floorName: "USB pad: audio p50 twice")
    }

    func bluetoothClicks(loss: String?) throws {
        let udev = try Udev()
        let audioFloor = try audioFloor(udev)

        // Across padgate, to a Bluetooth pad.
        let reports = LockedBox<[Event]>([])
        let physical = try EmulatedPlayStationPad(bus: .bluetooth, onOutput: { report in
            guard let decoded = try? DualSenseHapticsReader.decode(report) else { return }
            let sound = (decoded.left + decoded.right).contains { $0 != 0 }
            reports.update { if $0.count < 100_000 { $0.append((.now, sound, DualSenseHapticsReport.interval)) } }
        })
        defer { physical.stop() }
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let hidraw = try XCTUnwrap(physicalPad.hidraw)

        // Floor, report: a 0x32 write to the pad's hidraw node, to the pad.
        let device = try HIDRawDevice(path: hidraw)
        var stream = DualSenseHapticsReport.Stream()
        var reportFloor: [Duration] = []
        for _ in 0..<Self.clicks {
            reports.update { $0.removeAll() }
            let sent = MonotonicInstant.now
            try device.write(stream.report(ArraySlice(repeating: 50, count: 64)))
            let arrival = eventually(timeout: .seconds(2)) { reports.value.first?.at }
            reportFloor.append(try XCTUnwrap(arrival) - sent)
            try device.write(stream.report([]))
            usleep(20_000)
        }
        print("haptics latency floor parts: audio (write to a USB pad's packet) p50 \(ms(percentile(audioFloor, 0.5))), p99 \(ms(percentile(audioFloor, 0.99))); report (hidraw to the pad) p50 \(ms(percentile(reportFloor, 0.5))), p99 \(ms(percentile(reportFloor, 0.99)))")
        try clicksAcrossPadgate(physicalPad, events: reports, floor: percentile(audioFloor, 0.5) + percentile(reportFloor, 0.5),
                                floorName: "Bluetooth pad: audio p50 + report p50", loss: loss)
    }

    /// padgate's part stage by stage, each timed directly on the guest's one monotonic clock: the
    /// host pad's first packet of a click to its block's send (the host's debug log), the send to
    /// the client's receipt (the client's), and the receipt to the pad's report (the client's log
    /// and the pad), with the allowance each burst waited.
    func stages(serve: PadgateProcess, forward: PadgateProcess, arrivals: [MonotonicInstant]) {
        func micros(after marker: String, in line: String) -> Int64? {
            line.range(of: marker).flatMap { line[$0.upperBound...].split(separator: " ").first.flatMap { Int64($0) } }
        }
        func seconds(after marker: String, in line: String) -> Duration? {
            line.range(of: marker).flatMap { line[$0.upperBound...].split(separator: " ").first.flatMap { Double($0) } }
                .map { .nanoseconds(Int64($0 * 1e9)) }
        }
        let host = serve.snapshot().compactMap { line -> (packet: MonotonicInstant, sent: MonotonicInstant)? in
            guard let at = micros(after: "sound on the coils from ", in: line), let later = seconds(after: "sent ", in: line) else { return nil }
            let packet = MonotonicInstant(nanoseconds: at * 1000)
            return (packet, packet + later)
        }
        let client = forward.snapshot().compactMap { line -> (received: MonotonicInstant, allowance: Duration)? in
            guard let at = micros(after: "first block received at ", in: line), let allowance = seconds(after: "(allowance ", in: line) else { return nil }
            return (MonotonicInstant(nanoseconds: at * 1000), allowance)
        }
        guard host.count == arrivals.count, client.count == arrivals.count else {
            print("haptics stages: not matched (\(host.count) host onsets, \(client.count) client onsets, \(arrivals.count) clicks)")
            // Both ends' logs, for the run's results (tools/guest/run.sh copies them out).
            if let out = ProcessInfo.processInfo.environment["PADGATE_GUEST_OUT"] {
                let stamp = Int(MonotonicInstant.now.nanoseconds / 1_000_000)
                for (name, process) in [("serve", serve), ("forward", forward)] {
                    try? process.snapshot().joined(separator: "\n").write(toFile: "\(out)/haptics-\(stamp)-\(name).log", atomically: true, encoding: .utf8)
                }
                print("haptics stages: both ends' logs are haptics-\(stamp)-*.log in the run's results")
            }
            return
        }
        let capture = host.map { $0.sent - $0.packet }
        let wire = zip(host, client).map { $1.received - $0.sent }
        let toReport = zip(client, arrivals).map { $1 - $0.received }
        let allowances = client.map(\.allowance)
        for (name, values) in [("host pad's packet to the block's send", capture), ("the send to the client's receipt", wire),
                               ("the receipt to the pad's report (playout, report slot, hidraw)", toReport),
                               ("the allowance the burst waited (measured)", allowances)] {
            print("haptics stage: \(name): p50 \(ms(percentile(values, 0.5))), p99 \(ms(percentile(values, 0.99)))")
        }
        // In order: one hiccup held for the estimate's memory shows as a run of equal allowances.
        print("haptics stage: each burst's allowance, in order: \(allowances.map(ms).joined(separator: ", "))")
    }
}
