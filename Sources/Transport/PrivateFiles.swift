import Foundation
import PadSystem

/// Files only their owner may read: identities, `paired-clients`, `known_hosts`. Directories are
/// 0700 and files 0600 from the moment they exist (never written first and narrowed after), and
/// looser ones found on disk are narrowed.
public enum PrivateFiles {
    static let directoryMode = 0o700
    static let fileMode = 0o600

    /// Creates `directory` (and missing parents) as 0700, or narrows it to 0700 if it exists.
    static func prepare(directory: URL) throws {
        let manager = FileManager.default
        var missing: [URL] = []
        var cursor = directory
        while !manager.fileExists(atPath: cursor.path), cursor.pathComponents.count > 1 {
            missing.append(cursor)
            cursor = cursor.deletingLastPathComponent()
        }
        for url in missing.reversed() {
            try manager.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: directoryMode])
        }
        narrow(directory, to: directoryMode)
    }

    /// Writes `data` to `url` atomically: a 0600 file beside it, then renamed over it.
    public static func write(_ data: Data, to url: URL) throws {
        try prepare(directory: url.deletingLastPathComponent())
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: fileMode]) else {
            throw TLSError.identity("cannot write \(url.path): check the permissions of \(url.deletingLastPathComponent().path)")
        }
        guard rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw TLSError.identity("cannot replace \(url.path): \(Errno.current)")
        }
    }

    /// Creates an empty 0600 file to write into (for writers that open the path themselves).
    static func createEmpty(_ url: URL) throws {
        try prepare(directory: url.deletingLastPathComponent())
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: fileMode]) else {
            throw TLSError.identity("cannot create \(url.path)")
        }
        narrow(url, to: fileMode)
    }

    /// A one-entry-per-line store's entries, each split into its space-separated tokens with its
    /// line number (blank lines and `#` comments skipped); empty when the file is missing. The
    /// file is narrowed to its owner on the way, as every store's is.
    static func storeLines(_ url: URL) -> [(number: Int, tokens: [Substring])] {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        narrow(url, to: fileMode)
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            line.isEmpty || line.hasPrefix("#") ? nil : (index + 1, line.split(separator: " ", omittingEmptySubsequences: true))
        }
    }

    /// Takes away group and other permissions from an existing path.
    static func narrow(_ url: URL, to mode: Int) {
        guard let current = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.posixPermissions] as? Int,
              current & 0o077 != 0 else { return }
        chmod(url.path, mode_t(mode))
    }
}

/// One whitespace-free token for a line-based store, reading back exactly: bytes that are not
/// plainly printable ASCII, and space, `%` and `#`, are percent-encoded; the empty string is "%".
enum LineToken {
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "%"), byte != UInt8(ascii: "#") { out.unicodeScalars.append(Unicode.Scalar(byte)) }
            else { out += "%" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
        }
        return out.isEmpty ? "%" : out
    }

    /// Nil for anything `encode` cannot have written.
    static func decode(_ token: some StringProtocol) -> String? {
        if token == "%" { return "" }
        var bytes: [UInt8] = []
        var iterator = Array(token.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
