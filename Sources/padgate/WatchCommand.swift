import ArgumentParser
import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadSystem

struct WatchCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show a pad's live state: buttons, sticks, triggers, touch points, motion.",
        discussion: """
            PAD is an index from 'padgate list', one of the pad's /dev nodes, or vid:pid; the first pad \
            if omitted. The pad being unplugged is reported, and watching resumes when it comes back.
            """)

    @Argument(help: "The pad: index, /dev node, or vid:pid.")
    var pad: String?

    @Flag(help: "Print one JSON object per change (events: arrived, state, removed, error).")
    var json = false

    @Flag(help: "Ignore motion-sensor changes (they arrive hundreds of times a second).")
    var noMotion = false

    @Flag(help: "Wait for a matching pad to be plugged in instead of failing when there is none.")
    var wait = false

    @Option(parsing: .unconditional, help: "Stop after this many seconds.", transform: SecondsOption.parse)
    var duration: Double?

    @Option(help: "On exit, draw the gyro over the time watched, the rest windows and the bias 'padgate forward' would subtract, as an SVG image (docs/calibration.md).")
    var plot: String?

    struct Event: Encodable {
        var event: String
        var time: Double
        var pad: PadJSON?
        var state: LivePadState?
        /// Why a pad that came back could not be watched (e.g. its new node is not readable).
        var error: String?
    }

    func run() throws {
        let selector = try pad.map(PadSelector.init)
        SignalTrap.install {}
        let monitor = try PadMonitor()
        let start = MonotonicInstant.now
        let deadline = duration.map { start + SecondsOption.duration($0) }
        let view = TerminalView(enabled: !json && standardOutputIsTerminal)
        var reader: LivePadReader?
        var uniq: String?
        var last: LivePadState?
        // --plot: every new motion sample, and the continuous calibration run over them.
        var trace = plot.map { _ in PlotTrace() }
        var units: MotionUnits?
        var lastMotion: EvdevPadFrame?
        var plotted: Pad?
        defer {
            if let plot, var trace, let pad = plotted {
                if let window = trace.estimator.finish() { trace.windows.append(window) }
                do {
                    try GyroPlot(title: "\(pad.kind.displayName) \(pad.uniq): gyro as watched",
                                 subtitle: "\(pad.node(.motion)?.path ?? ""), \(trace.points.count) samples; shaded: rest windows 'padgate forward' would calibrate from",
                                 points: trace.points, windows: trace.windows).write(to: plot)
                } catch { console.warning("warning: \(error)") }
            }
        }

        func now() -> Double {
            (MonotonicInstant.now - start).seconds
        }
        func emit(_ kind: String, _ pad: Pad, _ state: LivePadState? = nil) {
            if json { JSONLines.print(Event(event: kind, time: now(), pad: kind == "state" ? nil : PadJSON(pad), state: state)) }
            else if kind == "state", let state { view.draw(pad, state) }
            else { view.message("\(kind): \(pad.kind.displayName) [\(pad.vidpid)] \(TerminalText.escaped(pad.name))") }
        }
        func snapshot(_ reader: LivePadReader) -> LivePadState {
            var state = reader.snapshot()
            if noMotion { state.gyro = nil; state.accel = nil; state.sensor_time = nil }
            return state
        }
        func attach() throws {
            // After a re-plug, find the same controller by its serial; node paths may differ.
            let candidates = monitor.pads
            let found = uniq.flatMap { u in candidates.first { $0.uniq == u && !u.isEmpty } }
                ?? (try? PadSelector.select(selector, from: candidates))
            guard let found else { return }
            let opened = try LivePadReader(pad: found)
            reader = opened; uniq = found.uniq; last = nil
            units = opened.motion.map(MotionUnits.init)
            if trace != nil && units != nil { plotted = found }
            emit("arrived", found)
            last = snapshot(opened)
            emit("state", found, last)
        }

        try attach()
        if reader == nil && !wait {
            _ = try PadSelector.select(selector, from: monitor.pads)  // throws the reason: no pads, no match, no such node
            throw DeviceError.noSuchPad(selector: selector?.description ?? "any", available: monitor.pads.count)
        }
        while !SignalTrap.fired {
            let remaining = deadline.map { $0 - MonotonicInstant.now }
            if let remaining, remaining <= .zero { return }
            let fds = [monitor.descriptor] + (reader?.descriptors ?? []) + [SignalTrap.descriptor]
            let ready = Poll.wait(fds, timeout: remaining).dropLast()
            if ready[0].readable {
                for change in monitor.handleEvents() {
                    if case .removed(let gone) = change, gone.id == reader?.pad.id {
                        reader = nil
                        emit("removed", gone)
                    }
                }
                if reader == nil {
                    // Keep watching: the pad may come back again, or the user may fix the permission.
                    do { try attach() } catch {
                        if json { JSONLines.print(Event(event: "error", time: now(), error: "\(error)")) }
                        else { view.message("error: \(error)") }
                    }
                }
            }
            guard let current = reader, ready.dropFirst().contains(where: { $0.readable || $0.hungUp }) else { continue }
            do {
                guard try current.readAvailable() else { continue }
            } catch DeviceError.removed {
                reader = nil
                emit("removed", current.pad)
                continue
            }
            if trace != nil, let units {
                let frame = current.frame()
                if let gyro = frame.gyro, let accel = frame.accel,
                   lastMotion.map({ $0.sensorTime != frame.sensorTime || $0.gyro != gyro || $0.accel != accel }) ?? true {
                    lastMotion = frame
                    trace?.add(gyro: units.gyro(gyro), accel: units.accel(accel), at: .now)
                }
            }
            let state = snapshot(current)
            if state != last {
                last = state
                emit("state", current.pad, state)
            }
        }
    }
}

/// Redraws a compact view of one pad in place on a terminal; prints plain lines otherwise.
final class TerminalView {
    let enabled: Bool
    private var block = InPlaceBlock()
    init(enabled: Bool) { self.enabled = enabled }

    func message(_ text: String) {
        block.forget()
        print(text)
    }

    func draw(_ pad: Pad, _ s: LivePadState) {
        var lines = [
            "\(pad.kind.displayName) [\(pad.vidpid)] \(pad.busName)  \(pad.gamepadNode?.path ?? "")",
            "buttons: \(s.buttons.isEmpty ? "-" : s.buttons.joined(separator: " "))   dpad: \(s.dpad)",
            "left (\(s.left_stick[0]),\(s.left_stick[1]))  right (\(s.right_stick[0]),\(s.right_stick[1]))  l2 \(s.l2)  r2 \(s.r2)",
        ]
        if pad.node(.touchpad) != nil {
            lines.append("touch: " + (s.touch.isEmpty ? "-" : s.touch.map { "#\($0.id) (\($0.x),\($0.y))" }.joined(separator: "  ")))
        }
        if let gyro = s.gyro, let accel = s.accel {
            lines.append("gyro \(gyro)  accel \(accel)  t \(s.sensor_time.map(String.init) ?? "-")")
        }
        if enabled {
            block.draw(lines)
        } else {
            print(lines.joined(separator: " | "))
        }
    }
}
