import Feedback
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// A forwarded PlayStation pad shown to games through uhid as the pad it is: a DualSense or Edge
/// (bound by hid-playstation: touchpad, motion sensors, lightbar, player LEDs and adaptive
/// triggers) or a DualShock 4 (bound by hid-sony on a 6.1 kernel, hid-playstation from 6.2:
/// touchpad, motion sensors, lightbar), each answering the driver and SDL with the physical
/// pad's own calibration and firmware reports. Output reports the game writes come back as rumble
/// leases and HID-output messages.
public final class PlayStationVirtualPad: VirtualPad {
    public let arrival: PadArrival
    let device: EmulatedPlayStationPad
    var state = GamepadState.dualSenseAtRest
    var translator: GameOutputTranslator
    let calibration: MotionCalibration
    /// What games play on a USB pad's voice coils, for the client's (nil: uhid, no audio).
    let coils: HostAudioCapture?
    /// The physical pad's microphone as this pad's (nil: uhid, or the client does not offer it).
    let microphone: HostMicrophone?
    let log = Logger(label: "padgate.host.haptics")

    /// - Parameter kind: what to present; nil: the arriving pad's own kind (a pad outside the
    ///   PlayStation family, or `serve --virtual dualsense`, is shown as a DualSense).
    /// - Parameter transport: `.usb`: a DualSense or Edge as a USB device on vhci-hcd, with its
    ///   audio function and an address derived from the physical pad's identity (the same on every
    ///   reconnect and host restart, so Steam keeps its settings); `.uhid`: on the Bluetooth bus.
    public init(arrival: PadArrival, presenting kind: PadKind? = nil, transport: VirtualPadTransport = .uhid) throws {
        self.arrival = arrival
        let identity = Self.identity(for: arrival, presenting: kind)
        translator = GameOutputTranslator(slot: arrival.slot, kind: identity.kind)
        calibration = identity.calibration
        let coils = transport == .usb ? HostAudioCapture(slot: arrival.slot, speaker: arrival.capabilities.contains(.speaker)) : nil
        self.coils = coils
        var onAudioOut: (@Sendable (UnsafeRawBufferPointer) -> Void)?
        if let coils { onAudioOut = { coils.take($0) } }
        // The physical pad's microphone, where its client offers it.
        var microphone: HostMicrophone?
        if transport == .usb, arrival.capabilities.contains(.microphone) {
            do { microphone = try HostMicrophone(slot: arrival.slot) } catch {
                Logger(label: "padgate.host").warning("slot \(arrival.slot.rawValue): the pad's microphone is not forwarded: \(error)")
            }
        }
        self.microphone = microphone
        var onAudioIn: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)?
        if let microphone { onAudioIn = { microphone.fill($0) } }
        device = try EmulatedPlayStationPad(kind: identity.kind, bus: EmulatedPlayStationPad.busPresentedToGames, transport: transport,
                                      name: arrival.name.isEmpty ? nil : arrival.name,
                                      macAddress: HostPadAddress.stable(for: arrival, kind: identity.kind),
                                      phys: PadPhys.hostVirtual, calibration: identity.calibrationReport,
                                      firmwareInfo: identity.firmwareInfo, idleRepeat: PadDrivers.driver(for: identity.kind).reportCadence,
                                      onAudioOut: onAudioOut, onAudioIn: onAudioIn)
        guard device.waitUntilOpened(timeout: .seconds(5)) else {
            device.stop()
            let driver = identity.kind == .dualShock4 ? "hid-sony (or hid-playstation on 6.2 and later)" : transport == .usb ? "usbhid and hid-playstation" : "hid-playstation"
            throw DeviceError.unsupported("\(driver) did not bind the virtual \(identity.kind.displayName): sudo modprobe \(identity.kind == .dualShock4 ? "hid-sony" : "hid-playstation")")
        }
        // Made means registered whole: the gamepad, motion and touchpad devices. The driver
        // opens the pad first, and the order is its own (hid-playstation's gamepad comes first,
        // hid-sony's last). The client's next pad is made after this one, so each keeps its
        // joystick number across a reconnect.
        if !KernelDrivers.waitForInputDevices(uniq: device.uniq, count: 3) {
            Self.log.notice("slot \(arrival.slot.rawValue): the driver did not register the virtual \(identity.kind.displayName)'s gamepad, motion and touchpad within \(KernelDrivers.inputRegistration)")
        }
    }

    private static let log = Logger(label: "padgate.host")

    /// `serve --virtual dualsense`: every pad as a DualSense, an Edge as itself.
    static func asDualSense(_ arrival: PadArrival, transport: VirtualPadTransport) throws -> PlayStationVirtualPad {
        try PlayStationVirtualPad(arrival: arrival, presenting: arrival.type == .dualSenseEdge ? .dualSenseEdge : .dualSense, transport: transport)
    }

    /// How games reach this pad: "usb" (a USB device on vhci-hcd) or "uhid".
    public var presentation: String { device.transport.rawValue }

    /// The kind `serve --virtual auto` shows an arriving pad as, when it is a PlayStation pad.
    public static func ownKind(of arrival: PadArrival) -> PadKind? {
        arrival.type.isPlayStation ? arrival.type : nil
    }

    /// What the virtual pad answers the driver and games with: the physical pad's own feature
    /// reports when the client sent usable ones for the kind presented, padgate's defaults
    /// otherwise. A calibration whose scale is implausible is refused: games would compute
    /// nonsense from it.
    static func identity(for arrival: PadArrival, presenting requested: PadKind? = nil)
        -> (kind: PadKind, calibrationReport: [UInt8], calibration: MotionCalibration, firmwareInfo: [UInt8]) {
        let kind: PadKind = (requested ?? ownKind(of: arrival)).flatMap { $0.isPlayStation ? $0 : nil } ?? .dualSense
        if kind == .dualShock4 { return dualShock4Identity(for: arrival) }
        var report = DualSenseIdentityData.calibration
        var calibration = (try? CalibrationParser.dualSense(report).calibration) ?? .nominal
        let sent = arrival.identity.calibration.bytes
        // Checked under both conventions: the host's kernel may be of either vintage, and an
        // older one divides by the gyro's `plus - minus`, which the newer convention never uses.
        if arrival.type.isDualSenseFamily, sent.count == DualSenseIdentityData.calibration.count,
           let parsed = try? CalibrationParser.dualSense(sent, bus: .usb), parsed.warnings.isEmpty,
           let legacy = try? CalibrationParser.dualSense(sent, convention: .legacy, bus: .usb), legacy.warnings.isEmpty {
            report = sent
            calibration = parsed.calibration
        }
        let firmware = arrival.identity.firmware.bytes
        let firmwareInfo = arrival.type.isDualSenseFamily && firmware.count == DualSenseIdentityData.firmwareInfo.count && firmware.first == 0x20
            ? firmware : DualSenseIdentityData.firmwareInfo
        return (kind, report, calibration, firmwareInfo)
    }

    /// A DualShock 4's: its calibration in either form (USB 0x02, Bluetooth 0x05 with a CRC that
    /// must verify) turned into the Bluetooth form the host's pad answers with, and its 0xa3
    /// version report.
    static func dualShock4Identity(for arrival: PadArrival) -> (kind: PadKind, calibrationReport: [UInt8], calibration: MotionCalibration, firmwareInfo: [UInt8]) {
        var report = DualShock4IdentityData.bluetoothCalibration
        var calibration = (try? CalibrationParser.dualShock4(report).calibration) ?? .nominal
        let sent = arrival.identity.calibration.bytes
        if arrival.type == .dualShock4, let form = try? DualShock4Calibration.bluetoothForm(sent),
           let parsed = try? CalibrationParser.dualShock4(form), parsed.warnings.isEmpty,
           let legacy = try? CalibrationParser.dualShock4(form, convention: .legacy), legacy.warnings.isEmpty {
            report = form
            calibration = parsed.calibration
        }
        let version = arrival.identity.firmware.bytes
        let firmwareInfo = arrival.type == .dualShock4 && version.count == DualShock4IdentityData.versionInfo.count
            && version.first == DualShock4IdentityData.versionInfoReportID ? version : DualShock4IdentityData.versionInfo
        return (.dualShock4, report, calibration, firmwareInfo)
    }

    public func apply(_ snapshot: PadStateSnapshot) throws {
        Self.update(&state, with: snapshot)
        try device.send(state)
    }

    public func apply(_ touch: TouchSnapshot) throws {
        Self.update(&state, with: touch)
        try device.send(state)
    }

    public func apply(_ motion: MotionBatch) throws {
        for i in 0..<motion.count {
            Self.update(&state, with: motion[i], calibration: calibration, presenting: device.kind)
            try device.send(state)
        }
    }

    public func apply(_ battery: BatteryReport) throws {
        let status = BatteryStatus(percent: min(battery.percent, 100), state: ChargingState(rawValue: battery.state) ?? .unknown)
        guard state.battery != status else { return }
        state.battery = status
        try device.send(state)
    }

    // The pure half of apply: what the virtual pad reports for what the client sent (fuzzed
    // without a device by padgate-fuzz's virtual-pad target).

    static func update(_ state: inout GamepadState, with snapshot: PadStateSnapshot) {
        state.buttons = GamepadButtons(rawValue: snapshot.buttons)
        state.dpad = DPad(hat: snapshot.dpad)
        state.leftStick = StickPosition(x: byte(snapshot.leftX), y: byte(snapshot.leftY))
        state.rightStick = StickPosition(x: byte(snapshot.rightX), y: byte(snapshot.rightY))
        state.l2 = snapshot.l2
        state.r2 = snapshot.r2
    }

    static func update(_ state: inout GamepadState, with touch: TouchSnapshot) {
        state.touch0 = TouchPoint(id: touch.first.id, active: touch.first.active, x: touch.first.x, y: touch.first.y)
        state.touch1 = TouchPoint(id: touch.second.id, active: touch.second.active, x: touch.second.x, y: touch.second.y)
    }

    /// Back to this pad's raw counts through its own calibration, so the kernel's calibrated
    /// evdev values equal the physical pad's; the sensor clock in the presented pad's own units.
    static func update(_ state: inout GamepadState, with s: WireMotionSample, calibration: MotionCalibration, presenting kind: PadKind = .dualSense) {
        let gyro = Float(MotionCalibration.gyroResolutionPerDegreePerSecond), accel = Float(MotionCalibration.accelResolutionPerG)
        state.motion.first = MotionSample(
            gyro: Vector3(x: raw(s.gyroX, calibration.gyro.x, gyro), y: raw(s.gyroY, calibration.gyro.y, gyro), z: raw(s.gyroZ, calibration.gyro.z, gyro)),
            accel: Vector3(x: raw(s.accelX, calibration.accel.x, accel), y: raw(s.accelY, calibration.accel.y, accel), z: raw(s.accelZ, calibration.accel.z, accel)))
        state.sensorTimestamp = kind.sensorTicks(micros: s.timestampMicros)
    }

    /// A physical value back to raw counts. Total: the decoder already refuses non-finite and
    /// out-of-range values, and this saturates anyway (NaN to 0), so no value can trap the host.
    static func raw(_ value: Float, _ axis: AxisCalibration, _ resolution: Float) -> Int16 {
        guard axis.numerator != 0 else { return 0 }
        let counts = (value * resolution * Float(axis.denominator) / Float(axis.numerator)).rounded() + Float(axis.bias)
        guard counts.isFinite else { return counts.isNaN ? 0 : (counts > 0 ? .max : .min) }
        return Int16(clamping: Int32(max(-40_000, min(40_000, counts))))
    }

    /// -32768...32767 back to the DualSense's 0...255 with 0 at 128.
    static func byte(_ v: Int16) -> UInt16 { UInt16(StickScale(minimum: 0, maximum: 255).raw(v)) }

    public var feedbackDescriptors: [FileDescriptor] {
        [device.outputReadyDescriptor] + (coils.map { [$0.descriptor] } ?? []) + (microphone.map { [$0.descriptor] } ?? [])
    }

    /// A microphone request's renewal, or its stop after the recording ended.
    public var feedbackDeadline: MonotonicInstant? { microphone?.nextDeadline }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        for report in device.takeOutputs() { messages += translator.messages(for: report) }
        microphone?.takeRequests(into: &messages)
        if let coils {
            coils.drain(into: &messages)
            if let began = coils.takeSoundBegan() {
                log.debug("haptics: a game's sound on the coils from \(began.nanoseconds / 1000) µs (monotonic), sent \(MonotonicInstant.now - began) later; \(coils.blocks) blocks so far, \(coils.dropped) dropped")
            }
        }
    }

    public func apply(_ frame: MicrophoneFrame) throws { microphone?.receive(frame) }

    public func remove() { device.stop() }
}
