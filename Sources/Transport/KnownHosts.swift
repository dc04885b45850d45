import Foundation

/// Fingerprints remembered per name, one `name fingerprint` line each, like ssh's known_hosts.
/// The client keeps hosts it has connected to; the host keeps clients it has paired with. Names
/// are stored as `LineToken`s, so any name (spaces, newlines, `#`) reads back as it was; the file
/// is 0600 in a 0700 directory.
public struct FingerprintStore {
    public let url: URL
    public private(set) var entries: [String: String] = [:]
    /// Lines that could not be read (reported by whoever loads the store).
    public private(set) var unreadableLines: [Int] = []

    public init(url: URL) throws {
        self.url = url
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return }
        PrivateFiles.narrow(url, to: PrivateFiles.fileMode)
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty && !line.hasPrefix("#") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 2, let name = LineToken.decode(parts[0]) else { unreadableLines.append(number + 1); continue }
            entries[name] = String(parts[1])
        }
    }

    public func fingerprint(for name: String) -> String? { entries[name] }
    public func contains(fingerprint: String) -> Bool { entries.values.contains(fingerprint) }

    public mutating func remember(_ name: String, fingerprint: String) throws {
        entries[name] = fingerprint
        let text = entries.keys.sorted().map { "\(LineToken.encode($0)) \(entries[$0]!)" }.joined(separator: "\n") + "\n"
        try PrivateFiles.write(Data(text.utf8), to: url)
    }

    public enum Verdict: Equatable { case known, firstUse }

    /// Trust on first use: an unknown name is remembered, a known one must present the same
    /// fingerprint or the connection is refused.
    public mutating func check(_ name: String, presented: String) throws -> Verdict {
        guard let expected = entries[name] else {
            try remember(name, fingerprint: presented)
            return .firstUse
        }
        guard expected == presented else { throw TLSError.fingerprintChanged(host: name, expected: expected, got: presented) }
        return .known
    }
}

/// Where padgate keeps its state: `$XDG_STATE_HOME/padgate` (identities, paired clients) and
/// `$XDG_CONFIG_HOME/padgate` (known hosts), overridable with `PADGATE_STATE_DIR`.
public enum PadgatePaths {
    public static var stateDirectory: URL {
        let env = ProcessInfo.processInfo.environment
        if let explicit = env["PADGATE_STATE_DIR"] { return URL(fileURLWithPath: explicit) }
        let base = env["XDG_STATE_HOME"].map(URL.init(fileURLWithPath:))
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return base.appendingPathComponent("padgate")
    }

    public static var configDirectory: URL {
        let env = ProcessInfo.processInfo.environment
        if let explicit = env["PADGATE_STATE_DIR"] { return URL(fileURLWithPath: explicit).appendingPathComponent("config") }
        let base = env["XDG_CONFIG_HOME"].map(URL.init(fileURLWithPath:))
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        return base.appendingPathComponent("padgate")
    }
}
