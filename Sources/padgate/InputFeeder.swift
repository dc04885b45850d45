import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem

/// Feeds an emulated DualSense: a steady stream of reports at the pad's report rate, their
/// contents held neutral, driven by a script, or replayed from a recording.
struct InputFeeder {
    let pad: EmulatedPlayStationPad
    let source: Source
    var interval: Duration = .milliseconds(8)  // 125 Hz; a real pad sends 250 Hz over USB

    enum Source {
        case neutral
        case script(InputScript)
        /// `loop`: again and again, each pass on its own clock.
        case replay([(time: Double, bytes: [UInt8])], loop: Bool)

        init(bus: PadBus, script: String?, replay: String?, loop: Bool = false) throws {
            if let script {
                self = .script(try InputScript(parsing: try InputFile.text(script, what: "--script")))
            } else if let replay {
                self = .replay(try InputFeeder.loadRecording(replay, bus: bus), loop: loop)
            } else {
                self = .neutral
            }
        }
    }

    init(pad: EmulatedPlayStationPad, source: Source) {
        self.pad = pad
        self.source = source
    }

    func run(until deadline: MonotonicInstant?, stop: () -> Bool) throws {
        var input = GamepadState.dualSenseAtRest
        let start = MonotonicInstant.now
        var next = start
        func pastDeadline() -> Bool { stop() || deadline.map { MonotonicInstant.now >= $0 } ?? false }
        func tick() throws {
            input.sensorTimestamp &+= UInt32(interval / .microseconds(1) * 3)  // 0.33 µs units
            try pad.send(input)
            next += interval
            SignalTrap.sleep(next - MonotonicInstant.now)
        }

        switch source {
        case .neutral:
            while !pastDeadline() { try tick() }
        case .script(let script):
            var player = InputScriptPlayer(script)
            while !pastDeadline() {
                player.advance(to: MonotonicInstant.now - start, &input)
                try tick()
            }
        case .replay(let reports, let loop):
            var passStart = start
            repeat {
                for report in reports {
                    let due = passStart + .milliseconds(Int(report.time * 1000))
                    SignalTrap.sleep(min(due, deadline ?? due) - MonotonicInstant.now)
                    if pastDeadline() { return }
                    try pad.send(report.bytes)
                }
                // The next pass starts one report interval after the last, and never in the past.
                passStart = max(MonotonicInstant.now, passStart + .milliseconds(Int((reports.last?.time ?? 0) * 1000))) + interval
            } while loop && !pastDeadline()
            // Leave the pad at rest rather than frozen in the recording's last state.
            while !pastDeadline() { try tick() }
        }
    }

    /// The bus whose DualSense input reports the recording holds (USB 0x01 of 64 bytes, or
    /// Bluetooth 0x31 of 78), so `--replay` needs no `--bus`.
    static func recordingBus(_ path: String) throws -> PadBus {
        let recording = try HIDRecording(text: try InputFile.text(path, what: "--replay", limit: InputFile.recordingLimit))
        for event in recording.events(forDevice: recording.devices.first?.index ?? 0) {
            if event.data.first == 0x01 && event.data.count == 64 { return .usb }
            if event.data.first == 0x31 && event.data.count == 78 { return .bluetooth }
        }
        return EmulatedPlayStationPad.busPresentedToGames
    }

    /// The recording's input reports that this bus can carry, with times relative to the first.
    static func loadRecording(_ path: String, bus: PadBus) throws -> [(time: Double, bytes: [UInt8])] {
        let recording = try HIDRecording(text: try InputFile.text(path, what: "--replay", limit: InputFile.recordingLimit))
        // Only the reports this bus's driver parses; a USB recording cannot drive a Bluetooth pad.
        let (id, length) = bus == .usb ? (UInt8(0x01), 64) : (UInt8(0x31), 78)
        let events = recording.events(forDevice: recording.devices.first?.index ?? 0)
            .filter { $0.data.first == id && $0.data.count == length }
        guard let first = events.first else {
            throw DeviceError.malformed("\(path) has no \(bus == .usb ? "USB 0x01 (64-byte)" : "Bluetooth 0x31 (78-byte)") DualSense input reports to replay; try --bus \(bus == .usb ? "bt" : "usb")")
        }
        return events.map { (time: $0.time - first.time, bytes: $0.data) }
    }
}
