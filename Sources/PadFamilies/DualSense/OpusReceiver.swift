import Feedback
import MonotonicTime
import PadDevices
import WireProtocol

/// An Opus stream's frames (the speaker's on the client, the microphone's on the host), decoded as
/// they arrive: the frames lost before each (up to `AudioPlayout.maximumConcealed`) decoded as
/// lost (Opus conceals them), then the frame, each onto the playout; a corrupt packet is counted
/// and its place stays silent.
public struct OpusReceiver {
    public private(set) var playout: AudioPlayout
    public mutating func seed(linkJitter: Duration) { playout.seed(linkJitter: linkJitter) }
    private let decoder: OpusDecoder
    private var pcm = [Int16](repeating: 0, count: 2 * Opus.frameSamples)
    public private(set) var corrupt = 0

    public init(configuration: AudioPlayout.Configuration) throws {
        decoder = try OpusDecoder()
        playout = AudioPlayout(configuration: configuration)
    }

    public mutating func receive<Kind>(_ frame: AudioFrame<Kind>, at now: MonotonicInstant) {
        let (placement, number) = playout.place(sequence: frame.sequence.rawValue, at: now)
        guard case .accept(let lost) = placement else { return }
        // The buffer moved out while it is written (no copy), and back.
        var pcm = self.pcm
        self.pcm = []
        defer { self.pcm = pcm }
        pcm.withUnsafeMutableBufferPointer { pcm in
            for k in stride(from: lost, to: 0, by: -1) where (try? decoder.decode(nil, into: pcm)) != nil {
                playout.store(number - Int64(k), pcm: UnsafeBufferPointer(pcm))
            }
            do {
                try frame.packet.withUnsafeBytes { try decoder.decode($0, into: pcm) }
                playout.store(number, pcm: UnsafeBufferPointer(pcm))
            } catch {
                corrupt += 1
            }
        }
    }

    /// The output's pull (`AudioPlayout.render`).
    public mutating func render(into out: UnsafeMutableBufferPointer<Int16>, frames: Int, playsAt: MonotonicInstant) -> HapticsPlayout.State {
        playout.render(into: out, frames: frames, playsAt: playsAt)
    }
}
