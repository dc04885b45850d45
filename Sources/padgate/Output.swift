import Foundation

/// One JSON object per line, keys sorted, for `--json` modes that scripts read as a stream.
enum JSONLines {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func print<T: Encodable>(_ value: T) {
        guard let data = try? encoder.encode(value) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    static func string<T: Encodable>(_ value: T, pretty: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).flatMap { String(data: $0, encoding: .utf8) } ?? "null"
    }
}

/// A message on standard error, for progress that must not mix with --json output.
func note(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

/// A block of lines redrawn in place on a terminal: cursor up over the last drawing, clear, write.
struct InPlaceBlock {
    private var drawn = 0
    /// The next drawing starts below whatever was printed since (e.g. after a log line).
    mutating func forget() { drawn = 0 }
    mutating func draw(_ lines: [String]) {
        var out = drawn > 0 ? "\u{1b}[\(drawn)A" : ""
        for line in lines { out += "\r\u{1b}[K" + line + "\n" }
        FileHandle.standardOutput.write(Data(out.utf8))
        drawn = lines.count
    }
}

/// A text file named on the command line, read with an error that names the file, the option
/// and what is wrong with it.
enum TextFile {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static func read(_ path: String, what: String) throws -> String {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            let reason = switch (error as NSError).code {
            case NSFileReadNoSuchFileError: "no such file"
            case NSFileReadNoPermissionError: "permission denied"
            default: (error as NSError).localizedDescription
            }
            throw ReadError(description: "cannot read \(what) \(path): \(reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ReadError(description: "\(what) \(path) is not a text file (UTF-8 expected)")
        }
        return text
    }
}
