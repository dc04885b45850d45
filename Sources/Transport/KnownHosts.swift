import Foundation

/// Fingerprints remembered per name, one `name fingerprint` line each, like ssh's known_hosts.
/// The client keeps hosts it has connected to; the host keeps clients it has paired with.
public struct FingerprintStore {
    public let url: URL
    public private(set) var entries: [String: String] = [:]

    public init(url: URL) throws {
        self.url = url
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { entries[String(parts[0])] = String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
    }

    public func fingerprint(for name: String) -> String? { entries[name] }
    public func contains(fingerprint: String) -> Bool { entries.values.contains(fingerprint) }

    public mutating func remember(_ name: String, fingerprint: String) throws {
        entries[name] = fingerprint
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let text = entries.keys.sorted().map { "\($0) \(entries[$0]!)" }.joined(separator: "\n") + "\n"
        try text.write(to: url, atomically: true, encoding: .utf8)
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
