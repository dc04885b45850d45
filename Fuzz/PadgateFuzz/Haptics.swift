import Feedback
import MonotonicTime
import PadFamilies
import WireProtocol

// MARK: haptics: what a host's haptics stream can make of the client's playout and the host's capture

/// The input as a script for the client's playout: each step is an op byte, then its operands.
/// Blocks and copies with any number and bytes, arriving at any time, pulls of any size at any moment: the
/// playout never traps, and once blocks stop the stream ends within its dead-link bound. The tail
/// of the input is also fed to the host's capture as isochronous packets of any size.
func fuzzHaptics(_ input: UnsafeRawBufferPointer) {
    var playout = HapticsPlayout(configuration: .init(lead: .milliseconds(10)))
    var out = [Int8](repeating: 0, count: 2 * 64)
    var time = MonotonicInstant.origin
    var i = 0
    func byte() -> UInt8? { guard i < input.count else { return nil }; defer { i += 1 }; return input[i] }
    while let op = byte() {
        time = time + .microseconds(Int64(op & 0x3F) * 500)
        if op & 0x80 == 0 {
            guard let hi = byte(), let lo = byte(), i + 30 <= input.count else { break }
            let sequence = UInt16(hi) << 8 | UInt16(lo), samples = UnsafeRawBufferPointer(rebasing: input[i..<i + 30])
            // Bit 6: the samples are a copy a later block carried (any number, any time).
            if op & 0x40 == 0 {
                _ = playout.receive(sequence: sequence, samples: samples, at: time)
            } else {
                _ = playout.receiveCopy(sequence: sequence, samples: samples, at: time)
            }
            i += 30
        } else {
            let frames = Int(op & 0x3F) + 1
            _ = out.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: frames, playsAt: time) }
        }
    }
    // No more blocks: the stream ends within the dead link's 100 ms (and a pull) of now, at most
    // the allowance and the lead later, whatever came before.
    var state = HapticsPlayout.State.playing
    let end = time + playout.delay + .milliseconds(100) + .milliseconds(400)
    while state == .playing && time < end {
        time = time + .milliseconds(5)
        state = out.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: 15, playsAt: time) }
    }
    if state != .idle { fatalError("the haptics stream did not end after its blocks stopped") }

    let capture = HostAudioCapture(slot: .init(0))
    var offset = 0
    while offset < input.count {
        let size = min(Int(input[offset]) * 3 + 1, input.count - offset)
        capture.take(UnsafeRawBufferPointer(rebasing: input[offset..<offset + size]))
        offset += size
    }
    var messages: [WireMessage] = []
    capture.drain(into: &messages)
    if messages.count > 32 { fatalError("the capture queued \(messages.count) blocks") }
}
