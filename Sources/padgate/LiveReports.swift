import ArgumentParser
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem

/// Raw input reports read live from a pad's hidraw node, for `inspect PAD` and `record PAD`.
struct LiveReports {
    let pad: Pad
    let device: RecordedDevice
    let hidraw: HIDRawDevice

    init(selector: String) throws {
        let pads = try Udev().pads()
        pad = try PadSelector.select(try PadSelector(selector), from: pads)
        guard let path = pad.hidraw else {
            throw DeviceError.unsupported("\(TerminalText.escaped(pad.name)) has no hidraw node (an evdev-only pad): use 'padgate watch' for it")
        }
        hidraw = try HIDRawDevice(path: path)
        device = RecordedDevice(index: 0, name: pad.name, bus: pad.kernelBus, vendorID: pad.vendorID, productID: pad.productID,
                                descriptor: try HIDRawDevice.reportDescriptor(hidrawPath: path))
    }

    /// Calls `body` with each report and its time since the start, until the deadline or a signal.
    func run(duration: Double?, _ body: (RecordedEvent) throws -> Void) throws {
        SignalTrap.install {}
        let start = MonotonicInstant.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !SignalTrap.fired {
            let elapsed = MonotonicInstant.now - start
            if let duration, elapsed >= SecondsOption.duration(duration) { return }
            let n = try buffer.withUnsafeMutableBufferPointer { try hidraw.read(into: $0, timeout: .milliseconds(200)) }
            guard n > 0 else { continue }
            let micros = Int((MonotonicInstant.now - start) / .microseconds(1))
            try body(RecordedEvent(seconds: micros / 1_000_000, microseconds: micros % 1_000_000, data: Array(buffer[0..<n])))
        }
    }
}

struct RecordCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a pad's raw HID input reports to a hid-recorder file.",
        discussion: "The file opens in hid-tools (hid-replay, hid-decode) and in 'padgate inspect'. It reads like hid-recorder's own: the device name and its descriptor item by item as comments, then each report preceded by its fields decoded from the descriptor, in hid-recorder's words.")

    @Argument(help: "The pad: index from 'padgate list', a /dev node, or vid:pid.")
    var pad: String

    @Option(name: .shortAndLong, help: "The file to write (default: standard output).")
    var output: String?

    @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until Ctrl-C).", transform: SecondsOption.parse)
    var duration: Double?

    func run() throws {
        // The file before the pad: a name that cannot be written is refused before the pad is opened.
        // A recording grows as the pad reports: readable meanwhile, and kept whole to its last line if padgate dies.
        let file = try output.map { try OutputFile($0, option: "-o", mode: .stream) }
        let live = try LiveReports(selector: pad)
        let write: (String) throws -> Void = { text in
            if let file { try file.write(text) } else { FileHandle.standardOutput.write(Data(text.utf8)) }
        }
        let descriptor = try? ReportDescriptor(bytes: live.device.descriptor)
        let header = HIDRecording(devices: [HIDRecorderFormat.annotated(live.device)], events: [])
        try write(header.headerText())
        var count = 0
        do {
            try live.run(duration: duration) { event in
                try write(HIDRecording.eventText(HIDRecorderFormat.annotated(event, descriptor: descriptor)))
                count += 1
            }
        } catch let error as OutputFile.Refused {
            throw error
        } catch {
            // The pad went away: what was recorded until then is kept.
            try file?.commit()
            throw error
        }
        try file?.commit()
        if output != nil { console.info("padgate: recorded \(count) reports to \(output!)") }
    }
}
