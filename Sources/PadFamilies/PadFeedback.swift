import PadDevices
import Feedback
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadSystem
import WireProtocol

/// All feedback for one pad: rumble (through the renderer and a sink), lightbar, player LEDs and
/// triggers, over one cumulative output state. Motors go to zero on `close()`, which callers run
/// on exit, SIGINT/SIGTERM and pad removal; a write error first reopens the output path and
/// retries, and if that fails silences through any other path before reporting the error.
public final class PadFeedback {
    public enum RumblePath: String, Sendable, CaseIterable {
        /// evdev force feedback where the driver offers it, else the PlayStation hidraw reports.
        case automatic = "auto"
        case evdev, hidraw
    }

    public struct Options: Sendable {
        public var rumblePath: RumblePath = .automatic
        /// Bluetooth PlayStation pads without hid-playstation: allow the switch to full reports.
        public var allowBluetoothFullReports = false
        /// Wait for a Bluetooth DualSense's connection animation before setting the lightbar.
        public var waitForStartupAnimation = true
        public var renderer = RumbleRenderer.Configuration()
        /// Offer the pad's microphone to the host (recorded only while a program there records).
        /// Off unless the user asks (`forward --microphone`): a host may then hear the room.
        public var offersMicrophone = false
        /// Write LED class devices (pads whose lights are not PlayStation reports) on a thread of
        /// their own, newest wins (`LEDWriter`): forwarding's loop must not wait on a driver's
        /// round trip to the pad. Errors are then counted, not thrown.
        public var lightsInBackground = false
        public init() {}
    }

    public let pad: Pad
    public let options: Options
    let driver: any PadDriver
    public private(set) var renderer: RumbleRenderer
    /// The family's lights, triggers and report rumble (`PadDriver.lights`), made at first use.
    private var madeLights: (any PadLights)?
    private var rumbleSink: RumbleSink?
    private var haptics: (any HapticsOutput)?
    private var envelope: HapticsEnvelope?
    private var hapticsUnavailable = false
    /// The pad's trackpads (made at the first pulse); set when it has none or they failed.
    private var pulses: (any TrackpadPulseOutput)?
    private var pulsesUnavailable = false
    /// The link's jitter from its pings, for the haptics output (made later, at the first block).
    private var linkJitter: Duration?
    private var closed = false
    private static let log = Logger(label: "padgate.feedback")

    public init(pad: Pad, options: Options = Options()) {
        self.pad = pad
        self.options = options
        driver = PadDrivers.driver(for: pad.kind)
        var rendering = options.renderer
        if let hold = driver.rumbleHold, hold < rendering.segment {
            // Segments no longer than the hardware holds a level, re-armed with 40 % of one left.
            rendering.segment = hold
            rendering.rearmMargin = hold * 2 / 5
        }
        renderer = RumbleRenderer(configuration: rendering)
    }

    deinit { close() }

    private var now: MonotonicInstant { .now }

    private var lights: any PadLights {
        if let madeLights { return madeLights }
        let made = driver.lights(for: pad, options: options)
        madeLights = made
        return made
    }

    // MARK: Lights and triggers

    public func setLightbar(_ color: RGBColor) throws { try lights.setLightbar(color) }
    public func setLightbar(enabled: Bool) throws { try lights.setLightbar(enabled: enabled) }
    public func setPlayerLEDs(_ leds: PlayerLEDs) throws { try lights.setPlayerLEDs(leds) }
    public func setTriggers(left: TriggerEffect?, right: TriggerEffect?) throws { try lights.setTriggers(left: left, right: right) }
    /// For a one-shot command (`padgate lightbar`): waits until a colour the lights hold back has gone out.
    public func finishLights() throws {
        while let due = madeLights?.deadline {
            let wait = due - now
            if wait > .zero { usleep(UInt32(min(wait, .seconds(1)) / .microseconds(1))) }
            try madeLights?.pump()
        }
    }

    // MARK: Haptics

    /// A block of the host's haptics stream: for the pad's voice coils where it has them, else as
    /// motor levels under the game's rumble (`HapticsEnvelope`; docs/feedback.md).
    public func receive(_ block: HapticsBlock) throws {
        guard try makeHapticsOutput() else { return }
        let at = now
        if let haptics {
            if haptics.sharesTheRumbleActuators && !renderer.target.isSilent { return }
            return haptics.receive(block, at: at)
        }
        guard var envelope else { return }
        let motors = block.withSamples { envelope.receive(sequence: block.sequence.rawValue, samples: $0, at: at) }
        self.envelope = envelope
        guard let motors else { return }
        renderer.receiveUnderlay(motors.levels, until: motors.until)
        do { try pump() } catch {
            // A pad with no motors to drive (or none left): haptics off for this session, said once.
            hapticsUnavailable = true
            throw error
        }
    }

    /// The link's jitter as `forward`'s pings measure it: the haptics playout's allowance before it
    /// has measured a stream of its own.
    public func observeLink(jitter: Duration) {
        linkJitter = jitter
        haptics?.observeLink(jitter: jitter)
    }

    /// A pulse train on the pad's trackpad, where it has one that pulses (a Deck's); otherwise
    /// nothing. A failure says itself once and turns pulses off for the session.
    public func receive(_ pulse: TrackpadPulse) throws {
        guard !closed, !pulsesUnavailable else { return }
        do {
            if pulses == nil { pulses = try driver.trackpadPulses(for: pad) }
            guard let pulses else { pulsesUnavailable = true; return }
            try pulses.play(pulse)
        } catch {
            pulsesUnavailable = true
            throw error
        }
    }

    /// A frame of the host pad's speaker pair, for the pad's own audio output.
    public func receive(_ frame: SpeakerFrame) throws {
        guard try makeHapticsOutput() else { return }
        haptics?.receive(frame, at: now)
    }

    /// A session that may play haptics started: the pad's coils open their stream now where
    /// starting it costs time (`HapticsOutput.open`). A pad without coils makes nothing yet, and
    /// an output that fails is left for the first block to make again and say why.
    public func openHaptics() {
        guard !closed, !hapticsUnavailable, haptics == nil, envelope == nil else { return }
        do { haptics = try madeHapticsOutput() } catch {
            Self.log.debug("\(pad.name): the haptics output waits for the first block: \(error)")
            return
        }
        haptics?.open()
    }

    /// The pad's haptics output (its voice coils), or the envelope onto its motors where it has
    /// none, made at the first block or frame. False: nothing takes them (closed, or it failed).
    private func makeHapticsOutput() throws -> Bool {
        guard !closed, !hapticsUnavailable else { return false }
        guard haptics == nil && envelope == nil else { return true }
        do {
            haptics = try madeHapticsOutput()
        } catch {
            hapticsUnavailable = true
            throw error
        }
        if haptics == nil { envelope = HapticsEnvelope() }
        return true
    }

    /// The family's haptics output for the pad, with the link's jitter as measured so far.
    private func madeHapticsOutput() throws -> (any HapticsOutput)? {
        let made = try driver.hapticsOutput(for: pad)
        if let linkJitter { made?.observeLink(jitter: linkJitter) }
        return made
    }

    /// What the haptics stream did on the motors of a pad without voice coils (nil: none came, or
    /// the pad has coils).
    public var hapticsOnMotors: HapticsEnvelope.Counters? { envelope?.counters }

    // MARK: Rumble

    /// Queues a rumble message; `pump()` applies it.
    public func receive(_ message: RumbleMessage) {
        Self.log.trace("rumble \(message.sequence): \(message.levels) for \(message.timeToLive)")
        renderer.receive(message, at: now)
    }

    /// When `pump()` must run next without new messages.
    public var nextDeadline: MonotonicInstant? {
        guard let held = madeLights?.deadline else { return renderer.nextDeadline }
        return min(held, renderer.nextDeadline ?? held)
    }

    /// Steps the renderer and performs its actions on the pad, and a held colour once it is due.
    public func pump() throws {
        if let held = madeLights?.deadline, held <= now { try madeLights?.pump() }
        for action in renderer.step(now: now) {
            Self.log.trace("rumble on \(pad.name): \(action)")
            try perform(action)
        }
    }

    private func sink() throws -> RumbleSink {
        if let rumbleSink { return rumbleSink }
        let made = try openRumbleSink()
        rumbleSink = made
        return made
    }

    private func openRumbleSink() throws -> RumbleSink {
        let evdevPath = pad.gamepadNode?.path
        switch options.rumblePath {
        case .evdev:
            guard let evdevPath else { throw DeviceError.unsupported("\(pad.name) has no gamepad evdev node to send force feedback to") }
            return try EvdevRumbleSink(path: evdevPath)
        case .hidraw:
            return try lights.reportRumble()
        case .automatic:
            if let sink = driver.ownRumbleSink(for: pad) { return sink }
            let reports = lights.rumblesThroughReports
            if let evdevPath, pad.capabilities.contains(.rumble) || !reports {
                do { return try EvdevRumbleSink(path: evdevPath) } catch let error as DeviceError where reports {
                    if case .removed = error { throw error }   // the pad is gone: no other path either
                }
            }
            guard reports else { throw DeviceError.unsupported("\(pad.name) has no rumble this program can drive") }
            return try lights.reportRumble()
        }
    }

    private func perform(_ action: RumbleAction) throws {
        let current = try sink()
        do {
            try current.perform(action)
        } catch let error as DeviceError {
            if case .removed = error { rumbleSink = nil; throw error }
            // Escalate: reopen the output path and retry once; never leave a motor at an unknown level.
            do {
                if try !current.reopen() { rumbleSink = nil }
                try sink().perform(action)
            } catch {
                rumbleSink = nil
                if current.path != pad.hidraw { lights.silenceRumble() }
                throw DeviceError.unsupported("rumble output to \(current.path) failed (\(error)); reopening did not help, so the motors were stopped through every remaining path")
            }
        }
    }

    /// Convenience for tools: holds `levels` for `duration`, re-arming segments, then stops.
    /// `interrupted` is polled between steps (SIGINT/SIGTERM).
    public func rumble(_ levels: MotorLevels, for duration: Duration, interrupted: () -> Bool = { false }) throws {
        try play(track: [(levels, duration)], repeatUntil: nil, interrupted: interrupted)
    }

    /// Plays (level, duration) steps in order, repeating the track until `repeatUntil` (if given).
    /// Each step is sent as a message whose lease is the step's remaining time plus a margin.
    public func play(track: [(MotorLevels, Duration)], repeatUntil: Duration?, interrupted: () -> Bool = { false }) throws {
        let started = now
        var sequence: UInt64 = 0
        repeat {
            for (levels, duration) in track {
                let stepEnds = now + duration
                while now < stepEnds && !interrupted() {
                    sequence += 1
                    // The tool is the sender here: it renews its own lease every 50 ms, as a host would.
                    receive(RumbleMessage(sequence: sequence, levels: levels, timeToLive: min(stepEnds - now, .milliseconds(250)) + .milliseconds(50)))
                    try pump()
                    let wake = min(stepEnds, now + .milliseconds(50), renderer.nextDeadline ?? stepEnds)
                    if wake > now { Thread.sleep(forTimeInterval: Double((wake - now).milliseconds) / 1000 + 0.0005) }
                }
                if interrupted() { break }
            }
        } while !interrupted() && repeatUntil.map { now - started < $0 } == true
        sequence += 1
        receive(RumbleMessage(sequence: sequence, levels: .silent, timeToLive: .zero))
        try pump()
    }

    /// Motors to zero through every open path; nothing is sent afterwards.
    public func close() {
        guard !closed else { return }
        closed = true
        madeLights?.close()
        haptics?.close()
        haptics = nil
        for action in renderer.shutdown() { try? rumbleSink?.perform(action) }
        rumbleSink?.silence()
        // Only the rumble path is silenced: a lightbar-only session must not stop another tool's rumble.
        rumbleSink = nil
        madeLights = nil
    }
}
