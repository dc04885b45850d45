import Foundation
import HIDCodecs
import Logging
import PadDevices
import PadFamilies
import Transport
import WireProtocol

extension MotionCorrectionStore {
    /// `<state dir>/calibration` (PADGATE_STATE_DIR, or $XDG_STATE_HOME/padgate): where
    /// `padgate calibrate` writes and `padgate forward` reads.
    public static var standard: MotionCorrectionStore {
        MotionCorrectionStore(directory: PadgatePaths.stateDirectory.appendingPathComponent("calibration"))
    }

    /// The pad's correction for forwarding: none without a serial or a file. An unusable file is
    /// passed to `warn` and skipped, never fatal: the pad still forwards, uncorrected.
    public func correction(for pad: Pad, warn: (String) -> Void) -> MotionCorrection? {
        guard !pad.uniq.isEmpty else { return nil }
        do { return try load(serial: pad.uniq) } catch {
            warn("\(error)")
            return nil
        }
    }

    /// The stored correction for a pad about to be forwarded; a file that cannot be used is
    /// logged and the pad forwards without it.
    static func forwardingCorrection(for pad: Pad) -> MotionCorrection? {
        standard.correction(for: pad) {
            Logger(label: "padgate.client.motion").warning("\($0); forwarding \(pad.name) without it")
        }
    }
}

extension Pad {
    /// What the wire announces this pad can do, from what discovery found.
    /// What the pad offers the host; its microphone only where the user allows it.
    func wireCapabilities(offeringMicrophone: Bool) -> WireCapabilities {
        var caps: WireCapabilities = [.analogTriggers]
        let c = capabilities
        if c.contains(.rumble) { caps.insert(.rumble) }
        if c.contains(.touchpad) { caps.insert(.touchpad) }
        if c.contains(.motion) { caps.formUnion([.accelerometer, .gyro]) }
        if c.contains(.battery) { caps.insert(.battery) }
        if c.contains(.lightbar) { caps.insert(.rgbLED) }
        if c.contains(.playerLEDs) { caps.insert(.playerLEDs) }
        if c.contains(.adaptiveTriggers) { caps.insert(.adaptiveTriggers) }
        let driver = PadDrivers.driver(for: kind)
        if driver.playsSpeaker(self) { caps.insert(.speaker) }
        if offeringMicrophone, driver.hasMicrophone(self) { caps.insert(.microphone) }
        return caps
    }
}
