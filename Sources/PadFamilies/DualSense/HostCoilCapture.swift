import Foundation
import HIDCodecs
import MonotonicTime
import PadSystem
import WireProtocol

/// The host's side of the haptics stream: what a game plays on the host pad's voice coils
/// (channels 2 and 3 of the USB pad's 4-channel 16-bit 48 kHz output, as its isochronous OUT
/// packets carry it) as numbered 5 ms `HapticsBlock`s at 3 kHz, queued for the input path.
///
/// - Blocks are numbered by their place in the stream, so the client places each by its number:
///   a block of silence after silence is not sent (a game that holds the pad's audio open
///   silently costs no datagrams), but it still takes its number.
/// - The queue is bounded (`capacity`, the newest kept): a stalled input path loses old haptics,
///   which the client would drop as late anyway, and never grows.
/// - `take` runs on the USB device's thread and allocates nothing; `descriptor` wakes the input path.
public final class HostCoilCapture: @unchecked Sendable {
    static let capacity = 32
    /// Bytes of one 48 kHz frame of the pad's output: 4 channels of 16 bits.
    static let frameBytes = 8

    public let slot: PadSlot
    /// Guards everything below.
    private let lock = NSLock()
    private var decimator = HapticsDecimator()
    private var block: HapticsBlock
    private var filled = 0
    private var sequence = WireSequence(0)
    private var lastWasSilent = true
    private var queue: [HapticsBlock]
    private var head = 0, count = 0
    /// A packet's trailing partial frame, carried to the next.
    private var partial = [UInt8](repeating: 0, count: frameBytes)
    private var partialCount = 0
    public private(set) var dropped = 0
    public private(set) var blocks = 0
    /// When the game's sound last began (a block with sound after silence), for the debug log.
    public private(set) var soundBegan: MonotonicInstant?
    private var soundReported = true
    private let wake = WakePipe()

    public init(slot: PadSlot) {
        self.slot = slot
        block = HapticsBlock(slot: slot, sequence: WireSequence(0))
        queue = [HapticsBlock](repeating: HapticsBlock(slot: slot, sequence: WireSequence(0)), count: Self.capacity)
    }

    /// Readable while blocks wait in `drain`.
    public var descriptor: FileDescriptor { wake.descriptor }

    /// One isochronous OUT packet's payload.
    public func take(_ packet: UnsafeRawBufferPointer) {
        var woke = false
        lock.withLock {
            var index = 0
            // A frame split across packets (snd-usb-audio sends whole frames; a peer need not).
            while partialCount > 0, index < packet.count {
                partial[partialCount] = packet[index]
                partialCount += 1
                index += 1
                if partialCount == Self.frameBytes {
                    partialCount = 0
                    partial.withUnsafeBytes { woke = push(frame: $0, at: 0) || woke }
                }
            }
            while index + Self.frameBytes <= packet.count {
                woke = push(frame: packet, at: index) || woke
                index += Self.frameBytes
            }
            while index < packet.count {
                partial[partialCount] = packet[index]
                partialCount += 1
                index += 1
            }
        }
        if woke { wake.wake() }
    }

    /// One 48 kHz frame at `offset`: its coil channels (2, 3) into the decimator. True when a block was queued.
    private func push(frame: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        func sample(_ channel: Int) -> Int16 {
            Int16(bitPattern: UInt16(frame[offset + 2 * channel]) | UInt16(frame[offset + 2 * channel + 1]) << 8)
        }
        guard let out = decimator.push(left: sample(2), right: sample(3)) else { return false }
        block[2 * filled] = out.left
        block[2 * filled + 1] = out.right
        filled += 1
        guard filled == HapticsBlock.frames else { return false }
        filled = 0
        defer {
            sequence = sequence.next
            block = HapticsBlock(slot: slot, sequence: sequence)
        }
        let silent = block.isSilent
        defer { lastWasSilent = silent }
        if silent && lastWasSilent { return false }
        if !silent && lastWasSilent { soundBegan = .now; soundReported = false }
        blocks += 1
        if count == Self.capacity {
            head = (head + 1) % Self.capacity
            count -= 1
            dropped += 1
        }
        queue[(head + count) % Self.capacity] = block
        count += 1
        return true
    }

    /// When sound began since the last call, once.
    public func takeSoundBegan() -> MonotonicInstant? {
        lock.withLock {
            guard !soundReported else { return nil }
            soundReported = true
            return soundBegan
        }
    }

    /// Hands over the queued blocks, oldest first, as wire messages.
    public func drain(into messages: inout [WireMessage]) {
        wake.drain()
        lock.withLock {
            while count > 0 {
                messages.append(.haptics(queue[head]))
                head = (head + 1) % Self.capacity
                count -= 1
            }
        }
    }
}
