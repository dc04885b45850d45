import PadDevices
@testable import PadFamilies

/// The emulated pads' output reports as the device tests wait for them: the pads ship in the
/// product (`emulate`, `demo`, the host's virtual pads), this test hook does not.
protocol EmulatedPadOutputs {
    var channel: UHIDPadChannel { get }
}

extension EmulatedPadOutputs {
    /// Waits until an output report satisfying `match` arrives, returning it; nil on timeout.
    /// Reports that arrived before the call count too; those looked at are consumed.
    func waitForOutput(timeout: Duration, where match: ([UInt8]) -> Bool) -> [UInt8]? {
        channel.waitForOutput(timeout: timeout, where: match)
    }
}

extension EmulatedPlayStationPad: EmulatedPadOutputs {}
extension EmulatedSwitchPro: EmulatedPadOutputs {}
extension EmulatedXboxOne: EmulatedPadOutputs {}
