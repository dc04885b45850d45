/// A WAV file's 16-bit PCM, read as the two voice-coil channels: mono on both, stereo as left and
/// right, four channels as the DualSense's own layout (coils on channels 2 and 3). Pure and
/// bounded: every size is checked against what is there, so a hostile or truncated file is an
/// error, never a crash or a huge allocation.
public struct WAVFile: Sendable {
    public static let maximumBytes = 64 << 20
    /// Format tags (mmreg.h): WAVE_FORMAT_PCM, WAVE_FORMAT_IEEE_FLOAT, WAVE_FORMAT_EXTENSIBLE.
    static let pcm = 1, float = 3, extensible = 0xFFFE
    public let sampleRate: Int
    public let channels: Int
    /// Left and right coil samples, interleaved.
    public let coilSamples: [Int16]

    public var frameCount: Int { coilSamples.count / 2 }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case notWAV
        case truncated(String)
        case unsupported(String)
        /// A data chunk with no whole frame: nothing to play, and playing nothing is no success.
        case noSamples
        public var description: String {
            switch self {
            case .tooLarge(let n): "\(n) bytes is more than the \(WAVFile.maximumBytes >> 20) MiB a haptics file may be"
            case .notWAV: "not a WAV file (no RIFF/WAVE header)"
            case .truncated(let what): "the file ends inside its \(what)"
            case .unsupported(let what): "\(what); convert it first, e.g. sox IN.wav -b 16 -r 48000 OUT.wav"
            case .noSamples: "its data chunk holds no samples: nothing to play"
            }
        }
    }

    public init(bytes: [UInt8]) throws(Failure) {
        guard bytes.count <= Self.maximumBytes else { throw .tooLarge(bytes.count) }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else { throw .notWAV }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        // `tag` is the extensible format's subformat when it has one (its GUID's first two bytes).
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var data: Range<Int>?
        var at = 12
        while at + 8 <= bytes.count, data == nil || format == nil {
            let size = u32(at + 4), body = at + 8
            guard size <= bytes.count - body else {
                // A data chunk cut short (a recording stopped early) is read as far as it goes.
                if bytes[at..<at + 4].elementsEqual("data".utf8) { data = body..<bytes.count; break }
                throw .truncated("'\(String(decoding: bytes[at..<at + 4].map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x3f }, as: UTF8.self))' chunk")
            }
            if bytes[at..<at + 4].elementsEqual("fmt ".utf8) {
                guard size >= 16 else { throw .truncated("format chunk") }
                format = (u16(body), u16(body + 2), u32(body + 4), u16(body + 14))
                if u16(body) == Self.extensible {
                    // WAVE_FORMAT_EXTENSIBLE says what its samples are only in its subformat; without one it says nothing.
                    format?.tag = size >= 40 ? u16(body + 24) : -1
                }
            } else if bytes[at..<at + 4].elementsEqual("data".utf8) {
                data = body..<body + size
            }
            at = body + size + (size & 1)
        }
        guard let format else { throw .truncated("header: no format chunk") }
        guard let data else { throw .truncated("header: no data chunk") }
        // PCM, plain or as an extensible file's subformat: a float file marked 16-bit is no PCM.
        guard format.tag == Self.pcm else {
            throw .unsupported(format.tag == Self.float ? "IEEE float samples are not 16-bit PCM"
                               : format.tag < 0 ? "an extensible format chunk without its subformat is not 16-bit PCM"
                               : "format \(format.tag) is not 16-bit PCM")
        }
        guard format.bits == 16 else { throw .unsupported("\(format.bits)-bit samples are not 16-bit PCM") }
        guard format.rate == 48_000 else { throw .unsupported("\(format.rate) Hz is not the pad's 48000 Hz") }
        guard [1, 2, 4].contains(format.channels) else { throw .unsupported("\(format.channels) channels: give 1, 2 or 4 (the pad's layout, coils on 3 and 4)") }
        sampleRate = format.rate
        channels = format.channels
        let frameBytes = 2 * format.channels, frames = data.count / frameBytes
        guard frames > 0 else { throw .noSamples }
        var samples = [Int16]()
        samples.reserveCapacity(frames * 2)
        for frame in 0..<frames {
            let base = data.lowerBound + frame * frameBytes
            func sample(_ channel: Int) -> Int16 { Int16(truncatingIfNeeded: u16(base + 2 * channel)) }
            switch format.channels {
            case 1: samples += [sample(0), sample(0)]
            case 2: samples += [sample(0), sample(1)]
            default: samples += [sample(2), sample(3)]
            }
        }
        coilSamples = samples
    }
}
