import Foundation
import HIDCodecs
import PadDevices
import Transport

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
}
