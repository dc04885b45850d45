import Foundation
import HIDCodecs

/// The motion corrections `padgate calibrate` measured, one JSON file per pad named by its serial
/// (the kernel's `uniq`, a DualSense's MAC address): `<directory>/<serial>.json`.
///
/// Pads without a serial get none: keyed by model and port, a correction would follow the port and
/// land on whichever pad is plugged in there next.
public struct MotionCorrectionStore: Sendable {
    public let directory: URL

    public init(directory: URL) { self.directory = directory }

    public func url(forSerial serial: String) throws(MotionCorrectionError) -> URL {
        directory.appendingPathComponent(try Self.fileStem(serial) + ".json")
    }

    /// The stored correction for `serial`; nil when there is none.
    public func load(serial: String) throws(MotionCorrectionError) -> MotionCorrection? {
        let url = try url(forSerial: serial)
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let correction: MotionCorrection
        do { correction = try JSONDecoder().decode(MotionCorrection.self, from: data) } catch {
            throw .unreadable(path: url.path, reason: "\(error)")
        }
        guard correction.version == MotionCorrection.currentVersion else {
            throw .unreadable(path: url.path, reason: "format version \(correction.version), this padgate reads \(MotionCorrection.currentVersion)")
        }
        guard try Self.fileStem(correction.serial) == Self.fileStem(serial) else {
            throw .unreadable(path: url.path, reason: "it is for serial \(correction.serial), not \(serial)")
        }
        return correction
    }

    /// Writes (replacing) the correction for its serial; returns where.
    @discardableResult
    public func save(_ correction: MotionCorrection) throws -> URL {
        let url = try url(forSerial: correction.serial)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try (encoder.encode(correction) + Data("\n".utf8)).write(to: url, options: .atomic)
        return url
    }

    /// Removes the correction for `serial`; false when there was none.
    @discardableResult
    public func remove(serial: String) throws -> Bool {
        let url = try url(forSerial: serial)
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        try FileManager.default.removeItem(at: url)
        return true
    }

    /// A serial as a file name: lower case (the same MAC reads the same over USB and Bluetooth),
    /// anything but letters, digits, ':', '-' and '_' replaced, so no serial can name a path.
    static func fileStem(_ serial: String) throws(MotionCorrectionError) -> String {
        let trimmed = serial.trimmingCharacters(in: .whitespaces).lowercased()
        guard !trimmed.isEmpty else { throw .noSerial }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789:-_")
        return String(trimmed.map { allowed.contains($0) ? $0 : "_" })
    }
}

public enum MotionCorrectionError: Error, Equatable, Sendable, CustomStringConvertible {
    case noSerial
    case unreadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .noSerial:
            return "the pad reports no serial number (uniq), so a stored correction could not be told apart from another pad's; nothing is stored (use --no-save to only measure)"
        case .unreadable(let path, let reason):
            return "cannot use the motion correction in \(path) (\(reason)): run 'padgate calibrate PAD' again, or delete the file"
        }
    }
}
