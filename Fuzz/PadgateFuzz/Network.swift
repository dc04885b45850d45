// Every parser that touches network bytes (docs/fuzzing.md): wire payloads both ways and what the
// host and the client do with them, sealed datagrams, control frames, pairing messages, and the
// virtual DualSense's report building. Built with -enable-testing, so the targets can reach the
// internal steps the shipped loops run (the host session, the client's feedback handling).
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
@testable import PadFamilies
import PadSystem
@testable import PadClient
@testable import PadHost
@testable import Transport
@testable import WireProtocol

/// Decoded, a message re-encodes to bytes that decode to itself: nothing the decoder accepts is
/// lost or changed on the way through padgate.
func checkRoundTrip(_ message: WireMessage) {
    var buffer = [UInt8](repeating: 0, count: 65_536 + 16)  // any message the decoder took: a pong may carry its ping's padding
    let count = buffer.withUnsafeMutableBytes { raw -> Int in
        var w = WireWriter(raw)
        guard (try? WireCodec.beginPayload(&w)) != nil, (try? WireCodec.encode(message, into: &w)) != nil else { fatalError("\(message) does not encode") }
        return w.count
    }
    var counters = WireCodec.Counters()
    var again: [WireMessage] = []
    buffer.withUnsafeBytes { WireCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), counters: &counters) { again.append($0) } }
    guard again == [message] else { fatalError("\(message) came back as \(again)") }
}

// MARK: session-budget: the host's per-datagram gate before any message is read

/// The input is cut into datagrams (a length byte, a gap byte in milliseconds, then that many
/// bytes), each offered to one session's budget as the input path offers it; what is admitted is
/// decoded. Checked: the header count agrees with the decoder's own count on what it admits, the
/// counters add up, and no more is admitted than the rate and burst allow.
func fuzzSessionBudget(_ input: UnsafeRawBufferPointer) {
    let limits = SessionBudget.Limits.forPads(4, bytesPerDatagram: OutgoingPayloads.payloadCapacity)
    var budget = SessionBudget(limits: limits, now: fuzzEpoch)
    var at = fuzzEpoch, offset = 0, offered = 0
    while offset + 2 <= input.count {
        let length = Int(input[offset]) * 8, gap = Int(input[offset + 1])
        offset += 2
        let end = min(input.count, offset + length)
        let datagram = UnsafeRawBufferPointer(rebasing: input[offset..<end])
        offset = end
        at = at + .milliseconds(gap)
        offered += 1
        guard budget.admit(datagram, now: at) else { continue }
        let counted = SessionBudget.messageCount(datagram, upTo: limits.messagesPerDatagram + 1)
        guard counted <= limits.messagesPerDatagram else { fatalError("admitted \(counted) messages, over the cap") }
        var counters = WireCodec.Counters()
        WireCodec.decode(datagram, counters: &counters) { _ in }
        let decoded = counters.messages + counters.unknownTypes + counters.malformed
        // A datagram with a wrong version decodes nothing; otherwise the walk saw every message the decoder did.
        guard counters.unknownVersions > 0 || decoded <= counted else { fatalError("the decoder read \(decoded) messages, the budget counted \(counted)") }
    }
    guard budget.admitted + budget.droppedTotal == offered else { fatalError("the counters do not add up") }
    let seconds = Double((at - fuzzEpoch) / .milliseconds(1)) / 1000
    let most = Double(limits.datagramsPerSecond) * (seconds + limits.burst / .seconds(1)) + 1
    guard Double(budget.admitted) <= most else { fatalError("admitted \(budget.admitted), the budget allows \(most)") }
}

// MARK: wire-host: a client's payload through the host's session, as the input path runs it

let fuzzEpoch = MonotonicInstant.now

/// A virtual pad that only checks what reaches it: no descriptors to make per input.
final class CheckingPad: VirtualPad {
    let arrival: PadArrival
    init(arrival: PadArrival) { self.arrival = arrival }
    func apply(_ state: PadStateSnapshot) throws { guard state.slot == arrival.slot else { fatalError("a state reached another slot's pad") } }
    func apply(_ touch: TouchSnapshot) throws { guard touch.slot == arrival.slot else { fatalError("a touch reached another slot's pad") } }
    func apply(_ motion: MotionBatch) throws { guard motion.slot == arrival.slot, motion.count <= MotionBatch.capacity else { fatalError("bad motion") } }
    var feedbackDescriptors: [FileDescriptor] { [] }
    func takeFeedback(into messages: inout [WireMessage]) throws {}
    func remove() {}
}

func fuzzWireHost(_ input: UnsafeRawBufferPointer) {
    let session = ClientPads(maxPads: 4, stateLease: .seconds(1)) { CheckingPad(arrival: $0) }
    var counters = WireCodec.Counters()
    WireCodec.decode(input, counters: &counters) { message in
        checkRoundTrip(message)
        _ = session.handle(message, now: fuzzEpoch)
    }
    var feedback: [WireMessage] = []
    session.feedback(now: fuzzEpoch, into: &feedback)
    session.expireLeases(now: fuzzEpoch + .seconds(2))  // released
    _ = session.handle(.ping(Probe(id: 0, sentMicros: 0)), now: fuzzEpoch + .seconds(2))
    session.expireLeases(now: fuzzEpoch + .seconds(30))  // removed after the grace period
    guard session.pads.isEmpty else { fatalError("a pad outlived its lease and grace period") }
    session.close()
}

// MARK: wire-client: the host's payload through the client's feedback handling

/// The client as `forward` runs it, with a scripted pad (the real renderer, output encoder and
/// decoder) in slots 0 and 1; made once, its state carries over between inputs as a session's would.
/// libFuzzer runs one input at a time, on one thread: nothing else ever touches it.
nonisolated(unsafe) let fuzzClient: PadForwarder = {
    let forwarder = PadForwarder(configuration: PadForwarder.Configuration(host: "127.0.0.1"), identity: nil,
                                 knownHosts: try! KnownHostStore(url: URL(fileURLWithPath: "/nonexistent/padgate-fuzz/known_hosts")))
    forwarder.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    for slot: UInt8 in [0, 1] { forwarder.add(try! ScriptedPadSource(script: InputScript(parsing: "press south"), slot: PadSlot(slot))) }
    return forwarder
}()

func fuzzWireClient(_ input: UnsafeRawBufferPointer) {
    var counters = WireCodec.Counters()
    WireCodec.decode(input, counters: &counters) { message in
        checkRoundTrip(message)
        fuzzClient.handle(message)
    }
    for source in fuzzClient.sources { try? source.pumpFeedback() }
}

// MARK: datagram-open: header, replay window and tag

let fuzzKeys = DirectionKeys(key: [UInt8](repeating: 0x5A, count: 32), iv: [UInt8](repeating: 0xA5, count: 12))

/// First byte even: the rest is one datagram to open. Odd: the rest is a script: a payload
/// (length byte, bytes), sealed 16 times, then deliveries (one byte each: which of the 16, and
/// with bit 0x40 a bit flip at the position the next byte gives). A genuine datagram opens once;
/// a tampered or repeated one never does.
func fuzzDatagramOpen(_ input: UnsafeRawBufferPointer) {
    guard let mode = input.first else { return }
    let opener = try! DatagramOpener(keys: fuzzKeys, session: 7)
    var out = [UInt8](repeating: 0, count: 2048)
    let rest = UnsafeRawBufferPointer(rebasing: input[1...])
    if mode & 1 == 0 {
        if let count = out.withUnsafeMutableBytes({ opener.open(rest, into: $0) }) { guard count <= rest.count else { fatalError("opened more than it read") } }
        return
    }
    guard let length = rest.first.map(Int.init), rest.count > length else { return }
    let payload = UnsafeRawBufferPointer(rebasing: rest[1..<(1 + length)])
    let sealer = try! DatagramSealer(keys: fuzzKeys, session: 7)
    var sealed: [[UInt8]] = []
    func datagram(_ index: Int) -> [UInt8] {  // sealed in order, as a sender numbers them, but only as far as needed
        while sealed.count <= index {
            var datagram = [UInt8](repeating: 0, count: payload.count + DatagramFormat.overhead)
            let n = datagram.withUnsafeMutableBytes { (try? sealer.seal(payload, into: $0)) ?? 0 }
            sealed.append(Array(datagram[0..<n]))
        }
        return sealed[index]
    }
    var opened = Set<Int>()
    var ops = Array(rest[(length + 1)...]).makeIterator()
    while let op = ops.next() {
        let index = Int(op & 0x0F)
        var datagram = datagram(index)
        var tampered = false
        if op & 0x40 != 0, let position = ops.next(), !datagram.isEmpty {
            datagram[Int(position) % datagram.count] ^= 1 << (op >> 4 & 0x03)
            tampered = true
        }
        let result = datagram.withUnsafeBytes { d in out.withUnsafeMutableBytes { opener.open(d, into: $0) } }
        if tampered { guard result == nil else { fatalError("a tampered datagram opened") }; continue }
        let first = opened.insert(index).inserted
        guard (result != nil) == first else { fatalError(first ? "a genuine datagram did not open" : "a replay opened") }
        if let result, !out[0..<result].elementsEqual(payload) { fatalError("opened to other bytes") }
    }
}

// MARK: control-frame

func fuzzControlFrame(_ input: UnsafeRawBufferPointer) {
    guard let message = try? ControlMessage(decoding: Array(input)) else { return }
    guard (try? ControlMessage(decoding: message.encoded())) == message else { fatalError("\(message) does not survive its round trip") }
    _ = displayable(peerText: "\(message)")
}

// MARK: pairing: SPAKE2 shares and confirmations from a peer

/// libFuzzer runs one input at a time, on one thread: nothing else ever touches it.
nonisolated(unsafe) let fuzzSpake = (w: [UInt8](repeating: 0x11, count: 32), context: try! BNContext(), curve: try! P256())

/// The input as a pairing request frame, its share strictly decoded as a P-256 point; a share
/// that is a valid point goes through a whole exchange (a fresh host side, `finish`, and the
/// client's confirmation checked against the rest of the input).
func fuzzPairing(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    _ = try? ControlMessage(decoding: [0x10, UInt8(truncatingIfNeeded: min(bytes.count, 255))] + bytes)
    let share = Array(bytes.prefix(Spake2.messageLength))
    guard (try? fuzzSpake.curve.decodePeerPoint(share, fuzzSpake.context)) != nil else { return }
    guard let host = try? Spake2(role: .b, passwordScalar: fuzzSpake.w, identityA: Array("client".utf8), identityB: Array("host".utf8)),
          let keys = try? host.finish(peerMessage: share) else { return }
    _ = keys.isValidPeerConfirmation(Array(bytes.dropFirst(Spake2.messageLength)))
}

// MARK: virtual-pad: what the host's virtual DualSense reports for what a client sent

let fuzzPadEncoder = PlayStationInputEncoder(layout: PlayStationLayouts.dualSenseUSB())
/// What a plain DualSense's report carries (an Edge's paddles and Fn buttons are not among them).
let dualSenseButtons = GamepadButtons(rawValue: (1 << 15) - 1)
let fuzzCalibration = (try? CalibrationParser.dualSense(DualSenseIdentityData.calibration).calibration) ?? .nominal

func fuzzVirtualPad(_ input: UnsafeRawBufferPointer) {
    var state = GamepadState.dualSenseAtRest
    var counters = WireCodec.Counters()
    var decoder = ControllerInputDecoder(PlayStationInputCodec.dualSense)
    var decoded = GamepadState()
    WireCodec.decode(input, counters: &counters) { message in
        switch message {
        case .state(let snapshot): PlayStationVirtualPad.update(&state, with: snapshot)
        case .touch(let touch): PlayStationVirtualPad.update(&state, with: touch)
        case .motion(let batch): for i in 0..<batch.count { PlayStationVirtualPad.update(&state, with: batch[i], calibration: fuzzCalibration) }
        default: return
        }
        // The report the kernel would get decodes to the state it was built from.
        let report = fuzzPadEncoder.encode(state)
        guard (try? decoder.decode(report, into: &decoded)) != nil, decoded.buttons == state.buttons.intersection(dualSenseButtons),
              decoded.leftStick == state.leftStick, decoded.motion.first.gyro == state.motion.first.gyro else {
            fatalError("the virtual pad's report does not say what it was built from: \(state.buttons) \(state.leftStick) \(state.motion.first) -> \(decoded.buttons) \(decoded.leftStick) \(decoded.motion.first)")
        }
    }
}
