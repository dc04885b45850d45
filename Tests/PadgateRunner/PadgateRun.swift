import Foundation

/// The built `padgate` executable, next to the test bundle.
public var padgateExecutable: URL {
    var url = Bundle(for: PadgateRunnerAnchor.self).bundleURL
    while url.pathExtension == "xctest" || url.lastPathComponent.hasSuffix(".xctest") { url.deleteLastPathComponent() }
    return url.appendingPathComponent("padgate")
}
final class PadgateRunnerAnchor {}

/// A finished `padgate` run: its exit status and both output streams.
public struct PadgateRun {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs `padgate` to completion, with `environment` added to this process's.
public func padgate(_ arguments: [String], environment: [String: String] = [:]) throws -> PadgateRun {
    let process = Process()
    process.executableURL = padgateExecutable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    process.standardOutput = out
    // Standard error to a file: a second pipe could fill up while we wait on the first.
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-stderr-\(UUID())")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errors) }
    process.standardError = try FileHandle(forWritingTo: errors)
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return PadgateRun(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                      stderr: (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
}
