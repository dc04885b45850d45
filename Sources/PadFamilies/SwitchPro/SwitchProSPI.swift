import PadDevices
import Foundation
import HIDCodecs
import MonotonicTime
import PadSystem

/// Reads a Switch Pro Controller's calibration blocks from its SPI flash through its hidraw node
/// (subcommand 0x10, at most 0x1D bytes a read, so each 48-byte block in two), the way
/// hid-nintendo and SDL read them. Works beside hid-nintendo: the replies are input reports every
/// reader of the node gets, and each is matched by its subcommand id and echoed address.
public enum SwitchProSPI {
    static let chunk = 24
    /// A neutral HD rumble frame (no amplitude), sent with every subcommand as the pad expects.
    static let neutralRumble: [UInt8] = [0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]

    public static func readCalibration(hidraw path: String, timeout: Duration = .seconds(1)) throws -> SwitchProCalibration {
        let device = try HIDRawDevice(path: path)
        var counter: UInt8 = 0
        func read(_ address: UInt32) throws -> [UInt8] {
            var request = [UInt8](repeating: 0, count: SwitchProReports.length)
            request[0] = SwitchProReports.subcommandOutputID
            request[1] = counter & 0x0F
            counter &+= 1
            request.replaceSubrange(2..<10, with: neutralRumble)
            request[10] = SwitchProReports.Subcommand.spiRead.rawValue
            for i in 0..<4 { request[11 + i] = UInt8(truncatingIfNeeded: address >> (8 * UInt32(i))) }
            request[15] = UInt8(chunk)
            try device.write(request)
            let deadline = MonotonicInstant.now + timeout
            while MonotonicInstant.now < deadline {
                guard let reply = try device.read(timeout: max(.zero, deadline - .now)) else { continue }
                // 0x21, controls, ack, id 0x10, address (4), length, data.
                guard reply.count >= 20 + chunk, reply[0] == SwitchProReports.subcommandReplyID,
                      reply[14] == SwitchProReports.Subcommand.spiRead.rawValue, Array(reply[15..<19]) == Array(request[11..<15]) else { continue }
                return Array(reply[20..<20 + chunk])
            }
            throw DeviceError.unsupported("\(path) did not answer the SPI read at 0x\(String(address, radix: 16))")
        }
        let factory = try read(SwitchProCalibration.factoryAddress) + read(SwitchProCalibration.factoryAddress + UInt32(chunk))
        let user = try read(SwitchProCalibration.userAddress) + read(SwitchProCalibration.userAddress + UInt32(chunk))
        guard let calibration = SwitchProCalibration(factory: factory, user: user) else {
            throw DeviceError.malformed("\(path): SPI calibration blocks of the wrong size")
        }
        return calibration
    }
}
