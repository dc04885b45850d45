import Foundation
import HIDCodecs
import Logging
import PadSystem

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


var standardOutputIsTerminal: Bool { FileDescriptor.standardOutput.isTerminal }

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

/// A file named on the command line, read with an error that names the file, what it was given as
/// and what is wrong with it (never a Foundation error dump). Every file a person names is read
/// here, through `UserFile.read`: bounded, and only a regular file.
enum InputFile {
    /// Not a ValidationError: thrown from run(), that would print the top-level usage after it.
    struct ReadError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A file that was not read, and why (`failure`, for code that acts on it).
    struct Refused: Error, CustomStringConvertible {
        let what: String
        let path: String
        let failure: UserFile.ReadFailure
        var description: String { "\(what) '\(path)' \(failure)" }
    }

    /// Scripts, patterns and descriptors are small; recordings may run to hours.
    static let defaultLimit = 16 << 20
    static let recordingLimit = 512 << 20

    /// A regular file's bytes, at most `limit` of them: a FIFO, a device such as /dev/zero or a
    /// runaway file is refused before it is read, so reading never blocks or fills memory.
    static func bytes(_ path: String, what: String, limit: Int = defaultLimit) throws -> Data {
        do { return Data(try UserFile.read(path, limit: limit)) } catch { throw Refused(what: what, path: path, failure: error) }
    }

    /// The file as UTF-8 text; otherwise an error pointing at the first byte that is not, plus `hint`.
    static func text(_ path: String, what: String, expected: String = "a text file", hint: String = "", limit: Int = defaultLimit) throws -> String {
        let data = try bytes(path, what: what, limit: limit)
        guard let text = String(data: data, encoding: .utf8) else {
            let offset = firstInvalidUTF8Offset(data) ?? 0
            throw ReadError("'\(path)' is not \(expected): it is not UTF-8 text (byte \(offset) is 0x\(Hex.encode([data[data.startIndex + offset]])))\(hint)")
        }
        return text
    }

    /// Where UTF-8 decoding first fails, to point at the offending byte.
    static func firstInvalidUTF8Offset(_ data: Data) -> Int? {
        var decoder = UTF8()
        var iterator = data.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}

/// A file a person named for padgate to write (`--plot`, `-o`), through `UserFile.Output`: a
/// regular file replaced whole at `commit()`, a FIFO or device written straight into, a directory
/// refused; errors name the option and the file.
struct OutputFile {
    struct Refused: Error, CustomStringConvertible {
        let option: String
        let path: String
        let failure: UserFile.WriteFailure
        var description: String { "\(option) '\(path)' \(failure)" }
    }

    let option: String
    let path: String
    private let output: UserFile.Output

    init(_ path: String, option: String, mode: UserFile.Output.Mode = .whole) throws {
        self.option = option; self.path = path
        do { output = try UserFile.Output(path: path, mode: mode) } catch { throw Refused(option: option, path: path, failure: error) }
    }

    func write(_ text: String) throws {
        do { try output.write(text.utf8) } catch { throw Refused(option: option, path: path, failure: error) }
    }

    func commit() throws {
        do { try output.commit() } catch { throw Refused(option: option, path: path, failure: error) }
    }

    /// `text` as the whole file.
    static func write(_ text: String, to path: String, option: String) throws {
        let file = try OutputFile(path, option: option)
        try file.write(text)
        try file.commit()
    }
}
