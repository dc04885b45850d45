import Foundation
import XCTest
@testable import HIDCodecs

/// Recordings WE write, read by hid-tools itself (the private venv tools/install-deps.sh installs, which `make test`
/// runs first): hid-decode must parse them and print our descriptor dump, and hid-tools' own recorder code, given
/// the same device and reports, must write exactly our text. A missing venv fails the test: it is part of the build.
final class HIDToolsCompatibilityTests: XCTestCase {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let venv = packageRoot.appendingPathComponent(".tools/python/bin")

    var scratch: URL!
    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-hidtools-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: scratch) }

    struct HIDToolsMissing: Error, CustomStringConvertible { var description: String }

    /// Fails (never skips) when the venv is missing, saying how to install it.
    func hidTool(_ name: String) throws -> URL {
        let tool = Self.venv.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            throw HIDToolsMissing(description: "\(tool.path) is missing: run tools/install-deps.sh (make test runs it) to install hid-tools 0.12 into .tools/python")
        }
        return tool
    }

    func run(_ tool: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let diagnostics = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(tool.lastPathComponent) \(arguments): \(String(decoding: diagnostics, as: UTF8.self))")
        return String(decoding: text, as: UTF8.self)
    }

    /// Every fixture descriptor as a device, with reports to decode: the recordings' own, or for descriptors that
    /// come without reports, every input layout filled with seeded pseudo-random bytes (any bytes are fine here:
    /// hid-tools is the oracle for how they read).
    func recordings() throws -> [(String, HIDRecording)] {
        var all: [(String, HIDRecording)] = []
        for file in ["dualsense_edge_usb_dsegde", "dualsense_bt_djm00n_simple01", "xbox_elite2_bt_djm00n"] {
            var recording = try HIDRecording(text: Fixture.text("recordings/\(file).hid"))
            recording.events = Array(recording.events.prefix(40))
            all.append((file, recording))
        }
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func nextByte() -> UInt8 {   // xorshift64: the same bytes on every run
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return UInt8(truncatingIfNeeded: seed)
        }
        for name in Fixture.descriptorNames {
            let bytes = try Fixture.bytes("descriptors/\(name).rdesc.bin")
            let descriptor = try ReportDescriptor(bytes: bytes)
            var events: [RecordedEvent] = []
            for layout in descriptor.input {
                for repetition in 0..<4 {
                    var report = (0..<layout.sizeBytes).map { _ in nextByte() }
                    if let id = layout.id { report[0] = id.rawValue }
                    events.append(RecordedEvent(seconds: 0, microseconds: events.count * 1000 + repetition, data: report))
                }
            }
            all.append((name, HIDRecording(devices: [RecordedDevice(index: 0, name: "fixture \(name)", bus: 3, vendorID: 0x054C,
                                                                    productID: 0x0CE6, descriptor: bytes)], events: events)))
        }
        return all
    }

    /// What `padgate record` writes for a device and its reports.
    func writtenByPadgate(_ recording: HIDRecording) throws -> String {
        let device = recording.devices[0]
        let descriptor = try ReportDescriptor(bytes: device.descriptor)
        return HIDRecording(devices: [HIDRecorderFormat.annotated(device)],
                            events: recording.events.map { HIDRecorderFormat.annotated($0, descriptor: descriptor) }).text()
    }

    func testHidDecodeParsesOurRecordingsAndPrintsOurDescriptorDump() throws {
        let hidDecode = try hidTool("hid-decode")
        for (name, recording) in try recordings() {
            let text = try writtenByPadgate(recording)
            let file = scratch.appendingPathComponent("\(name).hid")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let decoded = try run(hidDecode, [file.path]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // hid-decode: "# device 0:0", the dump, "# ", then R:, N:, I: lines.
            let comments = decoded.prefix { $0.hasPrefix("#") }
            XCTAssertEqual(comments.first, "# device 0:0", name)
            let ours = HIDRecorderFormat.headerComments(name: "", descriptor: recording.devices[0].descriptor).dropFirst().map { "# " + $0 }
            XCTAssertEqual(Array(comments.dropFirst()), ours, name)
            let ourDescriptorLine = text.split(separator: "\n").first { $0.hasPrefix("R: ") }.map(String.init)
            XCTAssertEqual(decoded.first { $0.hasPrefix("R: ") }, ourDescriptorLine, "\(name): hid-decode read our R: line back")
        }
    }

    /// hid-tools' recorder (`HidrawDevice.dump`, what hid-recorder calls for every read) given the same device and
    /// reports writes exactly the text we write.
    func testHidRecorderWritesExactlyWhatWeWrite() throws {
        let python = try hidTool("python")
        let script = """
            import sys
            from hidtools.hid import ReportDescriptor
            from hidtools.hidraw import HidrawDevice, HidrawEvent
            class Replayed(HidrawDevice):
                def __init__(self, path):
                    self.events, self._dump_offset = [], -1
                    for line in open(path):
                        kind, _, rest = line.rstrip("\\n").partition(": ")
                        if kind == "R": self.report_descriptor = ReportDescriptor.from_string(rest)
                        elif kind == "N": self.name = rest
                        elif kind == "I": self.bustype, self.vendor_id, self.product_id = (int(x, 16) for x in rest.split())
                        elif kind == "E":
                            stamp, size, *data = rest.split()
                            sec, usec = stamp.split(".")
                            self.events.append(HidrawEvent(int(sec), int(usec), [int(x, 16) for x in data]))
            Replayed(sys.argv[1]).dump(sys.stdout)
            """
        for (name, recording) in try recordings() {
            let text = try writtenByPadgate(recording)
            let file = scratch.appendingPathComponent("\(name).hid")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let theirs = try run(python, ["-c", script, file.path])
            let ourLines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let theirLines = theirs.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(ourLines.count, theirLines.count, name)
            let firstDifference = zip(ourLines, theirLines).enumerated().first { $0.element.0 != $0.element.1 }
            XCTAssertNil(firstDifference, "\(name) line \(firstDifference?.offset ?? 0):\nours:   \(firstDifference?.element.0 ?? "")\ntheirs: \(firstDifference?.element.1 ?? "")")
        }
    }
}
