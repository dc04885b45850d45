import ArgumentParser
import Foundation
import HIDCodecs
import PadDevices
import PadFamilies
import PadSystem

/// `padgate inspect`: decode a report descriptor, or every report of a hid-recorder file.
/// SOURCE is a hid-recorder file, or a live pad (index, /dev node, vid:pid) read from its hidraw node.
struct InspectCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode a report descriptor, a hid-recorder recording, or a live pad's reports.",
        discussion: """
            padgate inspect --descriptor FILE [--json]   print the reports and fields a descriptor declares
            padgate inspect FILE.hid [--json]            decode every report of a hid-recorder recording
            padgate inspect PAD [--json] [--duration S]  decode a pad's reports live (index, /dev node or vid:pid)
            The descriptor file may be raw bytes or hex text. With --json, descriptors print in hid-tools' shape
            and recordings print one JSON object per report.
            """)

    @Argument(help: "A hid-recorder file, or a live pad: index from 'padgate list', a /dev node, or vid:pid.")
    var source: String?

    @Option(parsing: .unconditional, help: "With a live pad: stop after this many seconds.", transform: SecondsOption.parse)
    var duration: Double?

    @Option(name: .customLong("descriptor"), help: "A report descriptor file (binary or hex text).")
    var descriptorPath: String?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if source == nil && descriptorPath == nil { throw ValidationError("give a recording to decode, or --descriptor FILE") }
        if source != nil && descriptorPath != nil { throw ValidationError("give either a recording or --descriptor, not both") }
    }

    func run() throws {
        if let descriptorPath {
            try inspectDescriptor(at: descriptorPath)
        } else if let source {
            try inspect(source: source)
        }
    }

    /// A pad is named by an index, vid:pid or a /dev node; anything else is a file that should be there.
    static func namesAPad(_ source: String) -> Bool {
        guard !source.hasPrefix("/dev/") else { return true }
        return !source.hasPrefix("/") && (try? PadSelector(source)) != nil
    }

    private func inspect(source: String) throws {
        // A pad's node (a character device) or a name that is no file: the pad, live.
        let type = (try? FileManager.default.attributesOfItem(atPath: source))?[.type] as? FileAttributeType
        if type == .typeCharacterSpecial || (type == nil && Self.namesAPad(source)) {
            return try inspectLive(selector: source)
        }
        let text = try InputFile.text(source, what: "recording", expected: "a hid-recorder recording",
                                        hint: "; a raw report descriptor goes with --descriptor", limit: InputFile.recordingLimit)
        let recording: HIDRecording
        do { recording = try HIDRecording(text: text) } catch { throw ValidationError("\(source): \(error)") }
        // Nothing to decode is not success: an empty file is no recording (hid-recorder writes a device first).
        guard !recording.devices.isEmpty || !recording.events.isEmpty else {
            throw InputFile.ReadError("\(source) holds no device and no report: not a hid-recorder recording ('padgate record PAD -o FILE.hid' writes one)")
        }
        var inspectors: [Int: ReportInspector] = [:]
        for device in recording.devices { inspectors[device.index] = ReportInspector(device: device, codecs: PadDrivers.inputCodec) }
        if !json {
            for device in recording.devices {
                let ids = [device.bus, device.vendorID, device.productID].compactMap { $0.map { String($0, radix: 16) } }.joined(separator: ":")
                // The name is whatever the device called itself: escaped for the terminal.
                print("device \(device.index): \(device.name.map(TerminalText.escaped) ?? "(no name)") [\(ids)], descriptor \(device.descriptor.count) bytes")
            }
        }
        for event in recording.events {
            var inspector = inspectors[event.deviceIndex] ?? ReportInspector(descriptor: nil, codec: nil)
            let value = inspector.inspect(event.data, time: event.time)
            inspectors[event.deviceIndex] = inspector
            print(json ? value.serialized() : Self.line(value))
        }
    }

    private func inspectLive(selector: String) throws {
        let live = try LiveReports(selector: selector)
        var inspector = ReportInspector(device: live.device, codecs: PadDrivers.inputCodec)
        if !json { print("\(TerminalText.escaped(live.pad.name)) [\(live.pad.vidpid)] on \(live.pad.hidraw ?? "")") }
        try live.run(duration: duration) { event in
            let value = inspector.inspect(event.data, time: event.time)
            print(json ? value.serialized() : Self.line(value))
            fflush(nil)
        }
    }

    /// One human-readable line per report: `time id len  key=value ...`.
    static func line(_ value: JSONValue) -> String {
        guard case .object(let members) = value else { return value.serialized() }
        return members.map { key, v in
            if case .string(let s) = v { return "\(key)=\(s)" }
            return "\(key)=\(v.serialized())"
        }.joined(separator: " ")
    }

    private func inspectDescriptor(at path: String) throws {
        let data = try InputFile.bytes(path, what: "descriptor file")
        var bytes = [UInt8](data)
        // Hex text (e.g. from /sys/.../report_descriptor dumps or hid-tools) is accepted too.
        if let text = String(data: data, encoding: .utf8), let hex = try? Hex.decode(text), !hex.isEmpty { bytes = hex }
        let descriptor: ReportDescriptor
        do { descriptor = try ReportDescriptor(bytes: bytes) } catch { throw ValidationError("\(path): \(error)") }
        if json {
            print(DescriptorJSON.encode(descriptor).serialized(pretty: true))
            return
        }
        for kind in ReportKind.allCases {
            for layout in descriptor.reports(kind) {
                print("\(kind.rawValue) report \(layout.id.map(\.description) ?? "(unnumbered)"): \(layout.sizeBytes) bytes, application \(layout.application.map(UsageNames.name(of:)) ?? "Vendor")")
                for (field, n) in DescriptorJSON.foldedFields(layout.fields) {
                    let name = field.isConstant ? "padding" : UsageNames.name(of: field.usage)
                    let repeatText = n > 1 ? " x\(n)" : ""
                    let countText = field.count > 1 ? "[\(field.count)]" : ""
                    print("  bit \(field.startBit): \(name)\(countText)\(repeatText) \(field.sizeBits) bits, logical \(field.logicalMinimum)...\(field.logicalMaximum)\(field.isArray && !field.isConstant ? ", array" : "")")
                }
            }
        }
    }
}
