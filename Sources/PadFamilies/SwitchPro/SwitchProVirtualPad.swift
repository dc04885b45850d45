import HIDCodecs
import Logging
import PadDevices
import PadSystem
import WireProtocol

/// A forwarded Switch Pro shown to games as a Switch Pro over Bluetooth through uhid: hid-nintendo
/// binds it (gamepad and IMU nodes, player and home LEDs, force feedback) and SDL's HIDAPI Switch
/// driver opens it. It answers SPI reads with the physical pad's own calibration blocks, and turns
/// the wire's values back into the raw counts that read, through that calibration, as the physical
/// pad's did. HD rumble frames and player lights a game sends come back as leases and HID output.
public final class SwitchProVirtualPad: VirtualPad {
    public let arrival: PadArrival
    let device: EmulatedSwitchPro
    let calibration: SwitchProCalibration
    /// Decoded once: the reports use them on every state and motion sample.
    let sticks: SwitchProCalibration.Sticks
    let imuAxes: SwitchProCalibration.IMU
    var controls = SwitchProReports.Controls()
    var imu = SwitchProReports.IMUSample()
    var sequence = WireSequence(0)
    var lastLevels = MotorLevels.silent
    var lastLights: UInt8?

    public init(arrival: PadArrival) throws {
        self.arrival = arrival
        calibration = Self.calibration(for: arrival)
        sticks = calibration.sticks
        imuAxes = calibration.imu
        device = try EmulatedSwitchPro(calibration: calibration, name: arrival.name.isEmpty ? nil : arrival.name, phys: PadPhys.hostVirtual,
                                       macAddress: HostPadAddress.stable(for: arrival, kind: .switchPro))
        guard device.waitUntilOpened(timeout: .seconds(10)) else {
            device.stop()
            throw DeviceError.unsupported("hid-nintendo did not bind the virtual Switch Pro: sudo modprobe hid-nintendo")
        }
        // Made means its pad and IMU are registered (hid-nintendo's handshake comes first, and
        // from 6.12 the IMU before the pad): see `PlayStationVirtualPad`.
        if !KernelDrivers.waitForInputDevices(uniq: device.uniq, count: 2) {
            Logger(label: "padgate.host").notice("slot \(arrival.slot.rawValue): hid-nintendo did not register the virtual Switch Pro's IMU and gamepad within \(KernelDrivers.inputRegistration)")
        }
        controls.left = (UInt16(clamping: sticks.leftX.center), UInt16(clamping: sticks.leftY.center))
        controls.right = (UInt16(clamping: sticks.rightX.center), UInt16(clamping: sticks.rightY.center))
    }

    /// The physical pad's blocks when the client sent both and they are plausible; the defaults otherwise.
    static func calibration(for arrival: PadArrival) -> SwitchProCalibration {
        guard arrival.type == .switchPro,
              let sent = SwitchProCalibration(factory: arrival.identity.calibration.bytes, user: arrival.identity.firmware.bytes),
              sent.isPlausible else { return .defaults }
        return sent
    }

    /// The wire's stick (±32767 at the ends, +y down) as hid-nintendo's evdev value, then as the
    /// raw count that reads as it (the pad's +y is up, so y is negated, as the driver negates it).
    static let evdevStick = StickScale(minimum: -SwitchProMath.maxStick, maximum: SwitchProMath.maxStick)

    static func update(_ c: inout SwitchProReports.Controls, with s: PadStateSnapshot, sticks: SwitchProCalibration.Sticks) {
        var buttons = GamepadButtons(rawValue: s.buttons).intersection(PadKind.switchPro.buttons)
        // ZL and ZR are digital: an analog trigger from another pad presses them past half way.
        if s.l2 >= 128 { buttons.insert(.l2) }
        if s.r2 >= 128 { buttons.insert(.r2) }
        c.buttons = buttons
        c.dpad = DPad(hat: s.dpad)
        func value(_ w: Int16) -> Int32 { evdevStick.raw(w) }
        c.left = (SwitchProMath.rawStick(value(s.leftX), sticks.leftX), SwitchProMath.rawStick(-value(s.leftY), sticks.leftY))
        c.right = (SwitchProMath.rawStick(value(s.rightX), sticks.rightX), SwitchProMath.rawStick(-value(s.rightY), sticks.rightY))
    }

    /// A sample in deg/s and g as the raw counts hid-nintendo reads as it.
    static func rawIMU(_ s: WireMotionSample, axes: SwitchProCalibration.IMU) -> SwitchProReports.IMUSample {
        let (accel, gyro) = axes
        func g(_ v: Float, _ axis: SwitchProCalibration.IMUAxis) -> Int16 {
            SwitchProMath.rawGyro(Int32(clamping: Int64((Double(v) * Double(SwitchProMath.gyroPerDegreePerSecond)).rounded())), axis)
        }
        func a(_ v: Float, _ axis: SwitchProCalibration.IMUAxis) -> Int16 {
            SwitchProMath.rawAccel(Int32(clamping: Int64((Double(v) * Double(SwitchProMath.accelPerG)).rounded())), axis)
        }
        var sample = SwitchProReports.IMUSample()
        sample.gyro = (g(s.gyroX, gyro[0]), g(s.gyroY, gyro[1]), g(s.gyroZ, gyro[2]))
        sample.accel = (a(s.accelX, accel[0]), a(s.accelY, accel[1]), a(s.accelZ, accel[2]))
        return sample
    }

    public func apply(_ s: PadStateSnapshot) throws {
        var next = controls
        Self.update(&next, with: s, sticks: sticks)
        guard next != controls else { return }
        controls = next
        try device.send(controls)
    }

    public func apply(_ touch: TouchSnapshot) throws {}

    public func apply(_ motion: MotionBatch) throws {
        for i in 0..<motion.count {
            imu = Self.rawIMU(motion[i], axes: imuAxes)
            try device.send(controls, imu: imu)
        }
    }

    public func apply(_ battery: BatteryReport) throws {
        let level = UInt8(min(4, (UInt32(min(battery.percent, 100)) + 12) / 25))
        let charging = battery.state == ChargingState.charging.rawValue
        guard level != controls.batteryLevel || charging != controls.charging else { return }
        controls.batteryLevel = level
        controls.charging = charging
        try device.send(controls)
    }

    public var feedbackDescriptors: [FileDescriptor] { [device.outputReadyDescriptor] }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        for report in device.takeOutputs() {
            messages += Self.messages(for: report, slot: arrival.slot, sequence: &sequence, lastLevels: &lastLevels, lastLights: &lastLights)
        }
    }

    /// An output report as feedback: a rumble frame whose motors changed becomes a lease, a
    /// player-lights subcommand whose lights changed a HID-output message (the four lights are
    /// the mask's low bits; flashing ones count as lit).
    static func messages(for report: [UInt8], slot: PadSlot, sequence: inout WireSequence, lastLevels: inout MotorLevels,
                         lastLights: inout UInt8?) -> [WireMessage] {
        guard let output = SwitchProReports.output(report) else { return [] }
        var messages: [WireMessage] = []
        if let frame = output.rumble, let levels = SwitchHDRumble.levels(frame), levels != lastLevels {
            lastLevels = levels
            messages.append(.rumble(.unnumbered(slot: slot, levels: levels, ttlMillis: GameOutputTranslator.rumbleLeaseMillis)))
        }
        if output.subcommand == SwitchProReports.Subcommand.setPlayerLights.rawValue, let argument = output.arguments.first {
            let lights = (argument | argument >> 4) & 0x0F
            if lights != lastLights {
                lastLights = lights
                sequence = sequence.next
                var message = HIDOutputMessage(slot: slot, sequence: sequence)
                message.fields = .playerLEDs
                message.playerLEDMask = lights
                messages.append(.hidOutput(message))
            }
        }
        return messages
    }

    public func remove() { device.stop() }
}
