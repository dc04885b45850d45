import Foundation
import HIDCodecs
import PadSystem

/// The kernel's LED class devices (/sys/class/leds) that belong to one pad. Drivers such as
/// hid-nintendo (player-1..4), xpad and hid-playstation register their LEDs there.
public struct LEDClassDevices: Sendable {
    public var directories: [String]

    public init(pad: Pad, root: String = "/sys/class/leds") {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        directories = names.sorted().map { "\(root)/\($0)" }.filter { dir in
            // An LED belongs to the pad when its real sysfs path lies under the pad's HID (or input) device.
            let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: dir))
                .map { URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: root)).standardizedFileURL.path } ?? dir
            return real.hasPrefix(pad.id + "/")
        }
    }

    /// The player LEDs ("...:player-1" ... "...:player-5"), in the order of their numbers: the
    /// colour before the function differs (hid-nintendo's home LED is "blue:player-5", its player
    /// lights "green:player-1..4"), so the names alone would sort the home LED first.
    public var playerLEDs: [String] {
        directories.filter { $0.range(of: #":player-\d$"#, options: .regularExpression) != nil }
            .sorted { ($0.last ?? "0", $0) < ($1.last ?? "0", $1) }
    }
    /// A multicolour (RGB) indicator, e.g. a lightbar.
    public var rgbLED: String? { directories.first { FileManager.default.fileExists(atPath: $0 + "/multi_intensity") } }
    /// A lightbar as three single-colour LEDs ("…:red", "…:green", "…:blue"), as the DualShock 4's
    /// drivers register it: hid-sony (≤ 6.1) and hid-playstation (6.2+) alike.
    public var colourLEDs: (red: String, green: String, blue: String)? {
        func led(_ colour: String) -> String? { directories.first { $0.hasSuffix(":" + colour) } }
        guard let red = led("red"), let green = led("green"), let blue = led("blue") else { return nil }
        return (red, green, blue)
    }

    public func setPlayerMask(_ mask: UInt8) throws {
        let leds = playerLEDs
        guard !leds.isEmpty else { throw DeviceError.unsupported("this pad's driver exposes no player LEDs") }
        for (i, led) in leds.enumerated() { try write(mask & (1 << UInt8(i)) != 0 ? "1" : "0", to: led + "/brightness") }
    }

    public func setColor(_ color: RGBColor) throws {
        if rgbLED == nil, let leds = colourLEDs {
            for (path, value) in [(leds.red, color.red), (leds.green, color.green), (leds.blue, color.blue)] {
                try write(String(value), to: path + "/brightness")
            }
            return
        }
        guard let led = rgbLED else { throw DeviceError.unsupported("this pad's driver exposes no RGB LED") }
        try write("\(color.red) \(color.green) \(color.blue)", to: led + "/multi_intensity")
        let max = (try? String(contentsOfFile: led + "/max_brightness", encoding: .ascii))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "255"
        try write(max, to: led + "/brightness")
    }

    private func write(_ value: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw DeviceError.from(errno: .current, call: "open", path: path) }
        defer { try? handle.close() }
        do { try handle.write(contentsOf: Data(value.utf8)) } catch { throw DeviceError.from(errno: .ioError, call: "write", path: path) }
    }
}
