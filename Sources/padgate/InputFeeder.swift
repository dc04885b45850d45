import Foundation
import HIDCodecs
import PadDevices

/// Feeds an emulated DualSense: a steady stream of reports at the pad's report rate, their
/// contents held neutral, driven by a script, or replayed from a recording.
struct InputFeeder {
    let pad: VirtualDualSense
    let source: Source
    var interval: Duration = .milliseconds(8)  // 125 Hz; a real pad sends 250 Hz over USB

    enum Source {
        case neutral
        case script(InputScript)
        case replay([(time: Double, bytes: [UInt8])])
    }

    init(pad: VirtualDualSense, bus: VirtualDualSense.Bus, script: String?, replay: String?) throws {
        self.pad = pad
        if let script {
            guard let text = try? String(contentsOfFile: script, encoding: .utf8) else {
                throw DeviceError.notFound(path: script)
            }
            source = .script(try InputScript(parsing: text))
        } else if let replay {
            source = .replay(try Self.loadRecording(replay, bus: bus))
        } else {
            source = .neutral
        }
    }

    func run(until deadline: ContinuousClock.Instant?, stop: () -> Bool) throws {
        var writer = DualSenseInputWriter(bus: pad.bus)
        var input = EmulatedInput()
        let start = ContinuousClock.now
        var next = start
        func pastDeadline() -> Bool { stop() || deadline.map { ContinuousClock.now >= $0 } ?? false }
        func tick() throws {
            input.sensorTimestamp &+= UInt32(interval.components.attoseconds / 1_000_000_000_000 * 3)  // 0.33 µs units
            try pad.send(writer.report(input))
            next += interval
            let wait = next - ContinuousClock.now
            if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds)) }
        }

        switch source {
        case .neutral:
            while !pastDeadline() { try tick() }
        case .script(let script):
            var index = 0
            while !pastDeadline() {
                guard index < script.steps.count else { try tick(); continue }  // hold the last state
                switch script.steps[index] {
                case .set(let change): input.apply(change); index += 1
                case .repeatFromStart: index = 0; try tick()
                case .wait(let ms):
                    let until = ContinuousClock.now + .milliseconds(ms)
                    repeat { try tick() } while ContinuousClock.now < until && !pastDeadline()
                    index += 1
                }
            }
        case .replay(let reports):
            for report in reports {
                let due = start + .milliseconds(Int(report.time * 1000))
                let wait = due - ContinuousClock.now
                if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds)) }
                if pastDeadline() { return }
                try pad.send(report.bytes)
            }
            // Leave the pad at rest rather than frozen in the recording's last state.
            while !pastDeadline() { try tick() }
        }
    }

    /// The recording's input reports that this bus can carry, with times relative to the first.
    static func loadRecording(_ path: String, bus: VirtualDualSense.Bus) throws -> [(time: Double, bytes: [UInt8])] {
        throw DeviceError.unsupported("replay needs the hid-recorder reader")
    }
}
