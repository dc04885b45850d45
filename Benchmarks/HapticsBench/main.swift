import CMallocCounter
import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
import PadFamilies
import Transport
import WireProtocol

// The haptics path's own cost, stage by stage, through the calls `serve` and `forward` make for
// every 5 ms block (docs/haptics.md):
//   host:   HostAudioCapture.take for each 1 ms isochronous packet (4 channels, 48 frames), then
//           drain (what the input path does when the capture wakes it);
//   wire:   OutgoingPayloads.append of the block, DatagramSealer.seal, DatagramOpener.open and
//           WireCodec.decode (the client's receive);
//   client: HapticsPlayout.receive(_:at:) (the copy of the block before, then the block), then the output's pull: over Bluetooth render 32 frames and
//           fill report 0x32 (CRC included) every 10.667 ms, over USB render 15 frames and
//           upsample them to the pad's 4-channel 48 kHz period.
// Each stage is timed with the CPU's time-stamp counter around the shipped calls; allocations are
// counted over the steady state. Also printed: bytes on the wire per second of haptics (sealed
// datagrams plus IPv4 and UDP headers) and the CPU share one second of haptics costs.
// The added latency (a game's write to the pad's report) is measured in the guest against the
// real drivers: tools/bench-haptics.sh runs that too.
// The speaker path (a USB pad that asks for it, docs/audio.md) the same way, per 5 ms frame: the
// host's capture of channels 0-1 and its drain with the Opus encode; the wire; the client's
// OpusReceiver.receive (decode, place) and the output's pull of a 5 ms period. Over Bluetooth,
// per 10.667 ms report slot: the pull of the slot's 512 frames and BluetoothSpeakerEncoder.fill
// (squeeze to 480, the pad's 200-byte Opus frame, report 0x36 with its CRC).

let blocks = Int(ProcessInfo.processInfo.environment["PADGATE_BENCH_BLOCKS"] ?? "") ?? 20_000

/// 1 ms packets of the host pad's output: 150 Hz on the coils, noise on the headphone pair.
func packets(count: Int) -> [[UInt8]] {
    (0..<count).map { p in
        var bytes = [UInt8](repeating: 0, count: 48 * 8)
        for i in 0..<48 {
            let f = p * 48 + i
            let coil = Int16(sin(2 * Double.pi * 150 * Double(f) / 48_000) * 30_000)
            let samples = [Int16(truncatingIfNeeded: f &* 7919), Int16(truncatingIfNeeded: f &* 104_729), coil, coil / 2]
            for (c, s) in samples.enumerated() {
                bytes[i * 8 + 2 * c] = UInt8(truncatingIfNeeded: s)
                bytes[i * 8 + 2 * c + 1] = UInt8(truncatingIfNeeded: s >> 8)
            }
        }
        return bytes
    }
}

func median(_ values: [UInt64], _ nsPerTick: Double) -> Double {
    let sorted = values.sorted()
    return Double(sorted[sorted.count / 2]) * nsPerTick
}
func percentile(_ values: [UInt64], _ p: Double, _ nsPerTick: Double) -> Double {
    let sorted = values.sorted()
    return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) * nsPerTick
}

let source = packets(count: 600)   // 600 ms, replayed
let capture = HostAudioCapture(slot: PadSlot(0))
var messages: [WireMessage] = []
messages.reserveCapacity(8)
var outbox = OutgoingPayloads()
let keys = DirectionKeys(key: [UInt8](repeating: 7, count: 32), iv: [UInt8](repeating: 9, count: 12))
let sealer = try DatagramSealer(keys: keys, session: 1)
let opener = try DatagramOpener(keys: keys, session: 1)
var datagram = [UInt8](repeating: 0, count: 1500)
var opened = [UInt8](repeating: 0, count: 1500)
var counters = WireCodec.Counters()
var bluetooth = HapticsPlayout(configuration: .init(lead: DualSenseHapticsReport.interval))
var usb = HapticsPlayout(configuration: .init(lead: DualSenseCoils.usbQueue))
var pulled = [Int8](repeating: 0, count: 2 * DualSenseHapticsReport.framesPerReport)
var pulledUSB = [Int8](repeating: 0, count: 2 * HapticsPlayout.blockFrames)
var report = [UInt8](repeating: 0, count: DualSenseHapticsReport.length)
var period = [Int16](repeating: 0, count: 240 * 4)
var stream = DualSenseHapticsReport.Stream()
var upsampler = CoilUpsampler()
var ticks = (host: [UInt64](), wire: [UInt64](), client: [UInt64](), bluetooth: [UInt64](), usb: [UInt64]())
var sealedBytes = 0, datagrams = 0, decoded = 0

/// `messages` as `serve` sends them and `forward` takes them: appended to the outbox, each
/// datagram sealed, opened and decoded; the sealed bytes and datagrams.
@MainActor @inline(__always)
func throughTheWire(_ body: (WireMessage) -> Void) -> (bytes: Int, datagrams: Int) {
    var bytes = 0, sent = 0
    for message in messages { outbox.append(message) }
    outbox.drain { payload in
        let length = datagram.withUnsafeMutableBytes { (try? sealer.seal(payload, into: $0)) ?? 0 }
        bytes += length
        sent += 1
        let openedLength = datagram.withUnsafeBytes { sealed in
            opened.withUnsafeMutableBytes { opener.open(UnsafeRawBufferPointer(rebasing: sealed.prefix(length)), into: $0) }
        } ?? 0
        opened.withUnsafeBytes { raw in
            WireCodec.decode(UnsafeRawBufferPointer(rebasing: raw.prefix(openedLength)), counters: &counters, body)
        }
    }
    return (bytes, sent)
}

/// One block through every stage; simulated time moves 5 ms a block, so the playout sees the pace it would.
@MainActor @inline(never)
func block(_ n: Int, record: Bool) {
    let now = MonotonicInstant.origin + .milliseconds(5 * n)
    let t0 = padgate_ticks()
    for p in 0..<5 { source[(5 * n + p) % source.count].withUnsafeBytes { capture.take($0) } }
    messages.removeAll(keepingCapacity: true)
    capture.drain(into: &messages)
    let t1 = padgate_ticks()
    var received: HapticsBlock?
    let (bytes, sent) = throughTheWire { message in
        if case .haptics(let b) = message { received = b; decoded += 1 }
    }
    sealedBytes += bytes
    datagrams += sent
    let t2 = padgate_ticks()
    if let received {
        bluetooth.receive(received, at: now)
        usb.receive(received, at: now)
    }
    let t3 = padgate_ticks()
    // Bluetooth: a report every 32 frames (15 a block: 15 of every 32 blocks pull twice, the rest once).
    var bt: UInt64 = 0
    if (n * 15) / 32 != ((n + 1) * 15) / 32 {
        let s = padgate_ticks()
        _ = pulled.withUnsafeMutableBufferPointer { bluetooth.render(into: $0, frames: 32, playsAt: now) }
        pulled.withUnsafeBufferPointer { stream.fill(&report, samples: $0) }
        bt = padgate_ticks() - s
    }
    let u0 = padgate_ticks()
    _ = pulledUSB.withUnsafeMutableBufferPointer { usb.render(into: $0, frames: 15, playsAt: now) }
    upsampler.fill(&period, from: pulledUSB)
    let u1 = padgate_ticks()
    guard record else { return }
    ticks.host.append(t1 - t0)
    ticks.wire.append(t2 - t1)
    ticks.client.append(t3 - t2)
    if bt > 0 { ticks.bluetooth.append(bt) }
    ticks.usb.append(u1 - u0)
}

for n in 0..<2000 { block(n, record: false) }   // warm up: every buffer at its size
ticks.host.reserveCapacity(blocks); ticks.wire.reserveCapacity(blocks); ticks.client.reserveCapacity(blocks)
ticks.bluetooth.reserveCapacity(blocks); ticks.usb.reserveCapacity(blocks)
sealedBytes = 0; datagrams = 0; decoded = 0
let allocations = padgate_allocation_count()
let start = MonotonicInstant.now, startTicks = padgate_ticks()
for n in 2000..<(2000 + blocks) { block(n, record: true) }
let elapsed = MonotonicInstant.now - start, elapsedTicks = padgate_ticks() - startTicks
let allocationsPerBlock = Double(padgate_allocation_count() - allocations) / Double(blocks)
let nsPerTick = Double(elapsed / .nanoseconds(1)) / Double(elapsedTicks)

let host = median(ticks.host, nsPerTick), wire = median(ticks.wire, nsPerTick), client = median(ticks.client, nsPerTick)
let bt = median(ticks.bluetooth, nsPerTick), usbOut = median(ticks.usb, nsPerTick)
// Per second of haptics: 200 blocks and 93.75 Bluetooth reports (or 200 USB periods).
let cpuBluetooth = (host + wire + client) * 200 + bt * 93.75
let cpuUSB = (host + wire + client + usbOut) * 200
let bytesPerSecond = Double(sealedBytes + 28 * datagrams) / Double(blocks) * 200
print("haptics_path " + String(format: "blocks=%d decoded=%d host_ns=%.0f wire_ns=%.0f client_receive_ns=%.0f bt_report_ns=%.0f usb_period_ns=%.0f host_p99_ns=%.0f wire_p99_ns=%.0f",
                                blocks, decoded, host, wire, client, bt, usbOut, percentile(ticks.host, 0.99, nsPerTick), percentile(ticks.wire, 0.99, nsPerTick)))
print("haptics_cost " + String(format: "cpu_per_second_bt=%.5f%% cpu_per_second_usb=%.5f%% wire_bytes_per_second=%.0f datagrams_per_second=%.0f allocations_per_block=%.4f",
                                cpuBluetooth / 1e7, cpuUSB / 1e7, bytesPerSecond, Double(datagrams) / Double(blocks) * 200, allocationsPerBlock))
print("haptics_playout late=\(bluetooth.counters.late) missing=\(bluetooth.counters.missing) skips=\(bluetooth.counters.skips) played=\(bluetooth.counters.played)")
// The speaker: a game's two tones (440 and 1320 Hz) on the headphone pair, silent coils.
let speakerSource: [[UInt8]] = (0..<600).map { p in
    var bytes = [UInt8](repeating: 0, count: 48 * 8)
    for i in 0..<48 {
        let t = Double(p * 48 + i) / 48_000
        let s = Int16((sin(2 * Double.pi * 440 * t) * 0.5 + sin(2 * Double.pi * 1320 * t) * 0.25) * 20_000)
        for c in 0..<2 { bytes[i * 8 + 2 * c] = UInt8(truncatingIfNeeded: s); bytes[i * 8 + 2 * c + 1] = UInt8(truncatingIfNeeded: s >> 8) }
    }
    return bytes
}
let speakerCapture = HostAudioCapture(slot: PadSlot(0), speaker: true)
var speakerReceiver = try OpusReceiver(configuration: .init(lead: DualSenseCoils.usbQueue))
var speakerPeriod = [Int16](repeating: 0, count: 2 * AudioPlayout.frameSamples)
var speakerTicks = (host: [UInt64](), wire: [UInt64](), client: [UInt64](), pull: [UInt64]())
var speakerBytes = 0, speakerDatagrams = 0, speakerDecoded = 0

@MainActor @inline(never)
func speakerFrame(_ n: Int, record: Bool) {
    let now = MonotonicInstant.origin + .milliseconds(5 * n)
    let t0 = padgate_ticks()
    for p in 0..<5 { speakerSource[(5 * n + p) % speakerSource.count].withUnsafeBytes { speakerCapture.take($0) } }
    messages.removeAll(keepingCapacity: true)
    speakerCapture.drain(into: &messages)
    let t1 = padgate_ticks()
    var received: SpeakerFrame?
    let (bytes, sent) = throughTheWire { message in
        if case .speaker(let f) = message { received = f; speakerDecoded += 1 }
    }
    speakerBytes += bytes
    speakerDatagrams += sent
    let t2 = padgate_ticks()
    if let received { speakerReceiver.receive(received, at: now) }
    let t3 = padgate_ticks()
    _ = speakerPeriod.withUnsafeMutableBufferPointer { speakerReceiver.render(into: $0, frames: AudioPlayout.frameSamples, playsAt: now) }
    let t4 = padgate_ticks()
    guard record else { return }
    speakerTicks.host.append(t1 - t0)
    speakerTicks.wire.append(t2 - t1)
    speakerTicks.client.append(t3 - t2)
    speakerTicks.pull.append(t4 - t3)
}

for n in 0..<2000 { speakerFrame(n, record: false) }
speakerTicks.host.reserveCapacity(blocks); speakerTicks.wire.reserveCapacity(blocks)
speakerTicks.client.reserveCapacity(blocks); speakerTicks.pull.reserveCapacity(blocks)
speakerBytes = 0; speakerDatagrams = 0; speakerDecoded = 0
let speakerAllocations = padgate_allocation_count()
for n in 2000..<(2000 + blocks) { speakerFrame(n, record: true) }
let speakerAllocationsPerFrame = Double(padgate_allocation_count() - speakerAllocations) / Double(blocks)

// The Bluetooth speaker, per report slot, from the same receiver's playout.
let bluetoothSpeaker = try BluetoothSpeakerEncoder()
var speakerSlot = [Int16](repeating: 0, count: 2 * DualSenseSpeakerReport.slotFrames)
var speakerReport = [UInt8](repeating: 0, count: DualSenseSpeakerReport.length)
var silentCoils = [Int8](repeating: 0, count: 2 * DualSenseHapticsReport.framesPerReport)
var slotTicks: (pull: [UInt64], encode: [UInt64]) = ([], [])
var btReceiver = try OpusReceiver(configuration: .init(lead: DualSenseHapticsReport.interval))
let slots = blocks / 2
slotTicks.pull.reserveCapacity(slots); slotTicks.encode.reserveCapacity(slots)
@MainActor @inline(never)
func speakerSlotReport(_ n: Int, record: Bool) throws {
    // The link's 5 ms frames that fall in this slot (as the forwarding thread places them).
    let now = MonotonicInstant.origin + DualSenseHapticsReport.interval * n
    while Int64(speakerFed) * 5_000_000 <= now.nanoseconds + 20_000_000 {
        for p in 0..<5 { speakerSource[(5 * speakerFed + p) % speakerSource.count].withUnsafeBytes { speakerCapture.take($0) } }
        messages.removeAll(keepingCapacity: true)
        speakerCapture.drain(into: &messages)
        for case .speaker(let f) in messages { btReceiver.receive(f, at: MonotonicInstant.origin + .milliseconds(5 * speakerFed)) }
        speakerFed += 1
    }
    let t0 = padgate_ticks()
    _ = speakerSlot.withUnsafeMutableBufferPointer { btReceiver.render(into: $0, frames: DualSenseSpeakerReport.slotFrames, playsAt: now) }
    let t1 = padgate_ticks()
    try silentCoils.withUnsafeBufferPointer { coils in
        try speakerSlot.withUnsafeBufferPointer { try bluetoothSpeaker.fill(&speakerReport, sound: $0, coils: coils, stream: &stream) }
    }
    let t2 = padgate_ticks()
    guard record else { return }
    slotTicks.pull.append(t1 - t0)
    slotTicks.encode.append(t2 - t1)
}
var speakerFed = 0
for n in 0..<1000 { try speakerSlotReport(n, record: false) }
for n in 1000..<(1000 + slots) { try speakerSlotReport(n, record: true) }
let btPull = median(slotTicks.pull, nsPerTick), btEncode = median(slotTicks.encode, nsPerTick)
let sHost = median(speakerTicks.host, nsPerTick), sWire = median(speakerTicks.wire, nsPerTick)
let sClient = median(speakerTicks.client, nsPerTick), sPull = median(speakerTicks.pull, nsPerTick)
print("speaker_path " + String(format: "frames=%d decoded=%d host_capture_and_encode_ns=%.0f wire_ns=%.0f client_decode_ns=%.0f usb_period_ns=%.0f",
                                blocks, speakerDecoded, sHost, sWire, sClient, sPull))
print("speaker_bluetooth " + String(format: "slots=%d slot_pull_ns=%.0f squeeze_encode_report_ns=%.0f encode_p99_ns=%.0f cpu_per_second_client=%.4f%%",
                                slots, btPull, btEncode, percentile(slotTicks.encode, 0.99, nsPerTick), (btPull + btEncode) * 93.75 / 1e7))
print("speaker_cost " + String(format: "cpu_per_second=%.4f%% wire_bytes_per_second=%.0f allocations_per_frame=%.2f late=%d slips=%d played=%d",
                                (sHost + sWire + sClient + sPull) * 200 / 1e7, Double(speakerBytes + 28 * speakerDatagrams) / Double(blocks) * 200,
                                speakerAllocationsPerFrame, speakerReceiver.playout.counters.late, speakerReceiver.playout.counters.slips,
                                speakerReceiver.playout.counters.played))

if speakerDecoded != blocks || speakerReceiver.playout.counters.late > 0 {
    print("haptics bench: speaker targets missed (every frame decoded, none late)")
    exit(1)
}
if decoded != blocks || allocationsPerBlock > 0 || bluetooth.counters.late + bluetooth.counters.missing > 0 {
    print("haptics bench: targets missed (every block decoded, none late or missing, 0 allocations a block)")
    exit(1)
}
