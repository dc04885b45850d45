import ArgumentParser
import Foundation
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

        func now() -> Double {
            (MonotonicInstant.now - start).seconds
        }
        func emit(_ kind: String, _ pad: Pad, _ state: LivePadState? = nil) {
            if json { JSONLines.print(Event(event: kind, time: now(), pad: kind == "state" ? nil : PadJSON(pad), state: state)) }
            else if kind == "state", let state { view.draw(pad, state) }
            else { view.message("\(kind): \(pad.kind.displayName) [\(pad.vidpid)] \(pad.name)") }
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
