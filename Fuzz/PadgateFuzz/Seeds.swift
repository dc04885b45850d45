// Seed corpora for the network targets, made from real data by the real encoders: a DualSense
// Edge recording (hid-recorder, Tests/HIDCodecsTests/Fixtures) through the client's snapshot code,
// pydualsense's output reports through the host's game-output translator, and real control frames,
// SPAKE2 shares and sealed datagrams. `padgate-fuzz --write-seeds DIR` (tools/fuzz.sh runs it).
import Foundation
import HIDCodecs
@testable import PadHost
@testable import Transport
@testable import WireProtocol
@testable import PadFamilies

func writeSeeds(into directory: URL, fixtures: URL) throws {
    func write(_ target: String, _ name: String, _ bytes: [UInt8]) throws {
        let folder = directory.appendingPathComponent(target)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: folder.appendingPathComponent(name))
    }
    func payloads(_ messages: [WireMessage]) -> [[UInt8]] {
        var outbox = OutgoingPayloads(), out: [[UInt8]] = []
        for message in messages { outbox.append(message) }
        outbox.drain { out.append(Array($0)) }
        return out
    }

    // Client → host: what `forward` sends for the first reports of a real Edge.
    let recording = try HIDRecording(text: String(contentsOf: fixtures.appendingPathComponent("recordings/dualsense_edge_usb_dsegde.hid"), encoding: .utf8))
    var decoder = ControllerInputDecoder(PlayStationInputCodec.dualSenseEdge)
    var state = GamepadState()
    let slot = PadSlot(0)
    var clientMessages: [WireMessage] = [.arrival(PadArrival(slot: slot, type: .dualSenseEdge, vendorID: 0x054c, productID: 0x0df2,
                                                            capabilities: [.rumble, .touchpad, .gyro, .accelerometer], name: "DualSense Edge Wireless Controller"))]
    for (index, report) in recording.events.map(\.data).filter({ $0.first == 0x01 && $0.count == 64 }).prefix(40).enumerated() {
        guard (try? decoder.decode(report, into: &state)) != nil else { continue }
        var snapshot = PadSnapshots.controls(state, slot: slot)
        snapshot.sequence = WireSequence(UInt16(index + 1))
        clientMessages.append(.state(snapshot))
        clientMessages.append(.touch(PadSnapshots.touch(state, slot: slot)))
        var batch = MotionBatch(slot: slot)
        _ = batch.append(PadSnapshots.motion(state.motion.first, timestampMicros: state.sensorTimestamp / 3, calibration: .nominal))
        clientMessages.append(.motion(batch))
    }
    clientMessages += [.battery(BatteryReport(slot: slot, percent: 80, state: 1)), .ping(Probe(id: 1, sentMicros: 123_456)), .removal(slot)]
    let clientPayloads = payloads(clientMessages)
    for (i, payload) in clientPayloads.enumerated() {
        try write("wire-host", "edge-\(i)", payload)
        try write("virtual-pad", "edge-\(i)", payload)
    }
    // session-budget reads (length / 8, gap in ms, datagram) triples: the same payloads 4 ms apart
    // (a pad's 250 reports a second), then all at once.
    for (name, gap) in [("paced", UInt8(4)), ("burst", UInt8(0))] {
        var stream: [UInt8] = []
        for payload in clientPayloads {
            let blocks = (payload.count + 7) / 8
            stream += [UInt8(min(blocks, 255)), gap] + payload + [UInt8](repeating: 0, count: blocks * 8 - payload.count)
        }
        try write("session-budget", name, stream)
    }

    // Host → client: what `serve` sends for pydualsense's real output reports.
    let vectors = try JSONSerialization.jsonObject(with: Data(contentsOf: fixtures.appendingPathComponent("output_vectors/dualsense_output_pydualsense.json"))) as? [String: Any]
    var translator = GameOutputTranslator(slot: slot)
    var haptics = HapticsBlock(slot: slot, sequence: WireSequence(65_535))
    for i in 0..<2 * HapticsBlock.frames { haptics[i] = Int8(truncatingIfNeeded: i * 17) }
    var hostMessages: [WireMessage] = [.pong(Probe(id: 1, sentMicros: 123_456)), .motionRate(MotionRateRequest(slot: slot, hertz: 250)), .haptics(haptics)]
    for vector in (vectors?["vectors"] as? [[String: Any]]) ?? [] {
        guard let hex = vector["report_hex"] as? String, vector["bus"] as? String == "usb" else { continue }
        let report = stride(from: 0, to: hex.count, by: 2).compactMap { UInt8(hex.dropFirst($0).prefix(2), radix: 16) }
        hostMessages += translator.messages(for: report)
    }
    for (i, payload) in payloads(hostMessages).enumerated() { try write("wire-client", "pydualsense-\(i)", payload) }

    // Haptics: a steady stream of blocks (5 ms apart) with a pull each second block.
    var script: [UInt8] = []
    for n in 0..<40 {
        script += [0x0A, 0xFF, UInt8(truncatingIfNeeded: 0xF0 + n)] + (0..<30).map { UInt8(truncatingIfNeeded: n * 7 + $0 * 13) }
        if n % 2 == 1 { script.append(0x80 | 31) }
    }
    try write("haptics", "steady", script)

    // Sealed datagrams: one to open as it is (mode 0), and scripts that deliver, repeat and tamper (mode 1).
    let sealer = try DatagramSealer(keys: fuzzKeys, session: 7)
    let payload = payloads(Array(clientMessages.prefix(4)))[0]
    var sealed = [UInt8](repeating: 0, count: payload.count + DatagramFormat.overhead)
    _ = try sealed.withUnsafeMutableBytes { out in try payload.withUnsafeBytes { try sealer.seal($0, into: out) } }
    try write("datagram-open", "sealed", [0] + sealed)
    let short = Array(payload.prefix(40))
    try write("datagram-open", "script", [1, UInt8(short.count)] + short + [0, 1, 1, 0x42, 20, 3, 0x4F, 90, 2])

    // Control frames and pairing messages, from the real encoders.
    let spake = try Spake2(role: .a, passwordScalar: fuzzSpake.w, identityA: Array("client".utf8), identityB: Array("host".utf8))
    let frames: [ControlMessage] = [
        .hello(version: ControlMessage.protocolVersion, clientName: PeerName(local: "living-room")),
        .welcome(session: 0x1234_5678, udpPort: 47800, leaseMillis: 1000, maxPads: 4),
        .refused(reason: "this host accepts only paired clients"),
        .pairStart(share: spake.outboundMessage(), clientName: PeerName(local: "couch")),
        .pairReply(share: spake.outboundMessage(), confirmation: [UInt8](repeating: 7, count: 32)),
        .pairConfirm(confirmation: [UInt8](repeating: 9, count: 32)),
        .pairResult(accepted: true, message: "paired"),
    ]
    for (i, frame) in frames.enumerated() { try write("control-frame", "frame-\(i)", frame.encoded()) }
    try write("pairing", "share", spake.outboundMessage() + [UInt8](repeating: 0, count: 32))
}
