import ArgumentParser
import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// `padgate haptics`: a signal on a pad's haptics, from a WAV file or a test tone: a DualSense's
/// voice coils, any other pad's motors (a Switch Pro's HD rumble), as a game's would reach it.
struct HapticsCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "haptics",
        abstract: "Play a signal on a pad's haptics (a DualSense's voice coils, other pads' motors): a WAV file or a test tone.",
        discussion: """
            padgate haptics [--pad PAD] FILE.wav            16-bit 48 kHz: mono on both coils, stereo as left \
            and right, 4 channels as the pad's own layout (coils on channels 3 and 4)
            padgate haptics [--pad PAD] --tone HZ [--for DURATION] [--amplitude 0-1]
            padgate haptics --tone HZ --dry-run [--bus bt]     print the reports instead of sending them
            Over Bluetooth the coils take output report 0x32 (32 frames of 8-bit stereo at 3 kHz, every \
            10.667 ms; docs/haptics.md). The last report sent is silence, so the coils stop at once, on \
            Ctrl-C too; a killed padgate stops them when the pad's buffer runs dry. Over USB the coils are \
            channels 3 and 4 of the pad's own sound card (4 channels, 16-bit, 48 kHz), played through ALSA \
            with 40 ms queued; Ctrl-C drops the queue. A pad without voice coils plays the signal as a \
            game's haptics reach it: its loudness on the motors (left on the strong one, right on the weak \
            one), a Switch Pro's HD rumble at the signal's own frequency; they stop at the end and on Ctrl-C.
            """)

    @Argument(help: "A 16-bit 48 kHz WAV file.") var file: String?
    @Option(help: "A sine of this many hertz (1 to 1500) instead of a file.") var tone: Double?
    @Option(name: .customLong("for"), parsing: .unconditional, help: "How long the tone plays: 500ms, 2s (default 1s).") var duration: String?
    @Option(help: "The tone's amplitude, 0 to 1 of full scale (default 1).") var amplitude: Double = 1
    @Option(help: ArgumentHelp("The pad: an index from 'padgate list', one of its /dev nodes, or vid:pid. Default: the first pad.", valueName: "PAD"))
    var pad: String?
    @Flag(help: "Print each report as hex instead of sending it (no pad needed).") var dryRun = false
    @Option(help: "With --dry-run: the bus to build reports for (bt).") var bus: PadBus = .bluetooth

    /// The longest signal played: a bound, not a limit anyone should meet.
    static let maximumLength: Duration = .seconds(600)

    func validate() throws {
        guard (file == nil) != (tone == nil) else { throw ValidationError("give either FILE.wav or --tone HZ") }
        if let tone, !(1...1500).contains(tone) { throw ValidationError("--tone must be from 1 to 1500 Hz (the Bluetooth path carries up to 1.5 kHz)") }
        if !(0...1).contains(amplitude) { throw ValidationError("--amplitude must be from 0 to 1") }
        if file != nil && duration != nil { throw ValidationError("--for sets a tone's length; a file plays whole") }
        if dryRun && pad != nil { throw ValidationError("--dry-run prints reports; it takes no --pad") }
        if !dryRun && bus != .bluetooth { throw ValidationError("--bus goes with --dry-run; a pad's bus is known") }
    }

    func run() throws {
        let samples = try signal()
        if dryRun {
            guard bus == .bluetooth else { throw ValidationError("--bus usb: a USB pad's coils are its audio card's channels 3 and 4, not reports") }
            for report in HapticsReports(samples) { print(Hex.encode(report)) }
            return
        }
        let selector = try pad.map { try PadSelector($0) }
        let target = try PadSelector.select(selector, from: try Udev().pads())
        guard target.kind.hasVoiceCoils else { return try ThreadPriority.raisedForInput { try playWithoutCoils(samples, on: target) } }
        if target.bus == .usb {
            guard let card = try Udev().soundCard(of: target) else {
                throw ValidationError("\(TerminalText.escaped(target.name)) is on USB but has no sound card: is snd-usb-audio loaded (sudo modprobe snd-usb-audio)?")
            }
            let playback = try ALSAPlayback(card: card, channels: 4, rate: 48_000, latency: Self.usbLatency)
            // A test signal, not a game: the queue can be deep, and the writes carry the pad's
            // pace as input does (input priority, where the process may have it).
            return try ThreadPriority.raisedForInput { try play(samples, on: playback) }
        }
        guard let hidraw = target.hidraw else { throw ValidationError("\(TerminalText.escaped(target.name)) has no hidraw node to send reports to") }
        let device = try HIDRawDevice(path: hidraw)
        try ThreadPriority.raisedForInput { try play(samples, on: device) }
    }

    /// The coils' signal at 48 kHz, left and right interleaved.
    func signal() throws -> [Int16] {
        if let file {
            let bytes = try InputFile.bytes(file, what: "WAV file", limit: WAVFile.maximumBytes)
            let wav: WAVFile
            do { wav = try WAVFile(bytes: [UInt8](bytes)) } catch { throw ValidationError("\(file): \(error)") }
            guard wav.frameCount <= Int(Self.maximumLength.seconds) * 48_000 else { throw ValidationError("\(file) is longer than \(Int(Self.maximumLength.seconds)) s") }
            return wav.coilSamples
        }
        let length = try duration.map { try parseDuration($0, maximum: Self.maximumLength) } ?? .seconds(1)
        // A tone of no length would send nothing and still succeed.
        guard length > .zero else { throw ValidationError("--for must be more than 0 (500ms, 2s)") }
        let frames = Int(length.seconds * 48_000)
        let step = 2 * Double.pi * (tone ?? 0) / 48_000
        var samples = [Int16](repeating: 0, count: frames * 2)
        for i in 0..<frames {
            let value = Int16((sin(step * Double(i)) * amplitude * 32767).rounded())
            samples[2 * i] = value
            samples[2 * i + 1] = value
        }
        return samples
    }

    /// What ALSA holds ahead of the pad over USB: eight 5 ms periods, so a writer held up (a
    /// busy machine) does not leave the card without data.
    static let usbLatency: Duration = .milliseconds(40)
    static let usbPeriodFrames = 240

    /// Over USB: the pad's own 4-channel 48 kHz output, the coils on channels 2 and 3 and the
    /// headphone pair silent, written a period at a time (the writes pace it). Ctrl-C drops what
    /// is queued, so the coils stop at once; at the end `finish()` plays it out whole. The coils
    /// fall silent when the stream stops.
    func play(_ samples: [Int16], on playback: ALSAPlayback) throws {
        SignalTrap.install {}
        var period = [Int16](repeating: 0, count: Self.usbPeriodFrames * 4)
        var frame = 0
        let frames = samples.count / 2
        while !SignalTrap.fired, frame < frames {
            let count = min(Self.usbPeriodFrames, frames - frame)
            for i in 0..<Self.usbPeriodFrames {
                period[4 * i + 2] = i < count ? samples[2 * (frame + i)] : 0
                period[4 * i + 3] = i < count ? samples[2 * (frame + i) + 1] : 0
            }
            _ = try period.withUnsafeBufferPointer { try playback.write($0) }
            frame += count
        }
        if SignalTrap.fired { return playback.stop() }
        try playback.finish()
    }

    /// A pad without voice coils: the signal as the host's haptics stream brings a game's to it, in
    /// 5 ms blocks at 3 kHz through `PadFeedback` (motor levels, or a Switch Pro's HD rumble), on
    /// the blocks' own cadence; a silent block ends it, and `close()` stops the motors.
    func playWithoutCoils(_ samples: [Int16], on pad: Pad) throws {
        SignalTrap.install {}
        let feedback = PadFeedback(pad: pad)
        defer { feedback.close() }
        let timer = try PeriodicTimer(interval: HapticsBlock.duration)
        var builder = HapticsBlock.Builder(slot: PadSlot(0))
        for i in 0..<(samples.count / 2) {
            guard !SignalTrap.fired else { break }
            guard let block = builder.push(left: samples[2 * i], right: samples[2 * i + 1]) else { continue }
            try feedback.receive(block)
            _ = Poll.wait([timer.descriptor, SignalTrap.descriptor], timeout: HapticsBlock.duration * 2)
            _ = timer.takeExpirations()
        }
        try feedback.receive(HapticsBlock(slot: PadSlot(0), sequence: builder.sequence))
    }

    /// Sends the reports at the pad's cadence, then silence; Ctrl-C skips to the silence.
    func play(_ samples: [Int16], on device: HIDRawDevice) throws {
        SignalTrap.install {}
        let timer = try PeriodicTimer(interval: DualSenseHapticsReport.interval)
        var reports = HapticsReports(samples)
        defer {
            // Twice: the pad plays what it has buffered, and a silent report replaces it.
            for _ in 0..<2 { try? device.write(reports.silence()) }
        }
        while !SignalTrap.fired, let report = reports.next() {
            try device.write(report)
            _ = Poll.wait([timer.descriptor, SignalTrap.descriptor], timeout: DualSenseHapticsReport.interval * 2)
            _ = timer.takeExpirations()
        }
    }
}

/// A 48 kHz coil signal as the Bluetooth reports that carry it, numbered in order.
struct HapticsReports: Sequence, IteratorProtocol {
    private let samples: [Int16]
    private var frame = 0
    private var decimator = HapticsDecimator()
    private var stream = DualSenseHapticsReport.Stream()
    private var pending: [Int8] = []

    init(_ samples: [Int16]) {
        self.samples = samples
        pending.reserveCapacity(DualSenseHapticsReport.framesPerReport * 2)
    }

    mutating func next() -> [UInt8]? {
        pending.removeAll(keepingCapacity: true)
        while pending.count < DualSenseHapticsReport.framesPerReport * 2, frame < samples.count / 2 {
            if let out = decimator.push(left: samples[2 * frame], right: samples[2 * frame + 1]) { pending += [out.left, out.right] }
            frame += 1
        }
        guard !pending.isEmpty else { return nil }
        return stream.report(pending[...])
    }

    mutating func silence() -> [UInt8] { stream.report([]) }
}
