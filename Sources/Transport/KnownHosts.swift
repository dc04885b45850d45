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
        for (number, parts) in PrivateFiles.storeLines(url) {
            guard parts.count == 2, let name = LineToken.decode(parts[0]) else { unreadableLines.append(number); continue }
            entries[name] = String(parts[1])
        }
    }

    public func fingerprint(for name: String) -> String? { entries[name] }
    public func contains(fingerprint: String) -> Bool { entries.values.contains(fingerprint) }

    public mutating func remember(_ name: String, fingerprint: String) throws {
        entries[name] = fingerprint
        try save()
    }

    /// Forgets `name`; false if it was not there.
    @discardableResult
    public mutating func forget(_ name: String) throws -> Bool {
        guard entries.removeValue(forKey: name) != nil else { return false }
        try save()
        return true
    }

    private func save() throws {
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
/// `$XDG_CONFIG_HOME/padgate` (known hosts), overridable with `PADGATE_STATE_DIR`. As the XDG
/// base-directory rules say, an unset or relative XDG variable falls back to `$HOME/.local/state`
/// and `$HOME/.config`, and `$HOME` is read from the environment (the password database only when
/// it is unset), so `HOME=/tmp/x padgate …` keeps everything under /tmp/x.
public enum PadgatePaths {
    public static var stateDirectory: URL { stateDirectory(ProcessInfo.processInfo.environment) }
    public static var configDirectory: URL { configDirectory(ProcessInfo.processInfo.environment) }

    public static var runtimeDirectory: URL { runtimeDirectory(ProcessInfo.processInfo.environment) }
    /// The client's pinned hosts (`KnownHostStore`).
    public static var knownHostsFile: URL { configDirectory.appendingPathComponent("known_hosts") }

    /// Where the running host's control socket lives: `$PADGATE_RUNTIME_DIR`, else systemd's
    /// `$RUNTIME_DIRECTORY` (the unit's RuntimeDirectory=), else `$XDG_RUNTIME_DIR/padgate`, else
    /// `/run/padgate`. `serve` and `padgate host` resolve it alike.
    /// `runtimeDirectory`, refusing a `$PADGATE_RUNTIME_DIR` that is set but not absolute: the host
    /// and `padgate host` would each read it against their own working directory, and silently
    /// using another directory instead hides the mistake.
    public static func checkedRuntimeDirectory(_ env: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        if let explicit = env["PADGATE_RUNTIME_DIR"], !explicit.isEmpty, !explicit.hasPrefix("/") {
            throw RelativeRuntimeDirectory(value: explicit)
        }
        return runtimeDirectory(env)
    }

    public struct RelativeRuntimeDirectory: Error, CustomStringConvertible {
        public var value: String
        public var description: String {
            "PADGATE_RUNTIME_DIR='\(PeerName.echoed(value))' is not an absolute path; give the directory from / (e.g. PADGATE_RUNTIME_DIR=$PWD/\(PeerName.echoed(value)))"
        }
    }

    public static func runtimeDirectory(_ env: [String: String]) -> URL {
        if let explicit = env["PADGATE_RUNTIME_DIR"], explicit.hasPrefix("/") { return URL(fileURLWithPath: explicit) }
        // systemd lists one path per RuntimeDirectory= entry, colon-separated; the unit has one.
        if let systemd = env["RUNTIME_DIRECTORY"]?.split(separator: ":").first, systemd.hasPrefix("/") { return URL(fileURLWithPath: String(systemd)) }
        if let xdg = env["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg).appendingPathComponent("padgate") }
        return URL(fileURLWithPath: "/run/padgate")
    }

    public static func stateDirectory(_ env: [String: String]) -> URL {
        if let explicit = env["PADGATE_STATE_DIR"], !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        return base(env["XDG_STATE_HOME"], orHome: ".local/state", env).appendingPathComponent("padgate")
    }

    public static func configDirectory(_ env: [String: String]) -> URL {
        if let explicit = env["PADGATE_STATE_DIR"], !explicit.isEmpty { return URL(fileURLWithPath: explicit).appendingPathComponent("config") }
        return base(env["XDG_CONFIG_HOME"], orHome: ".config", env).appendingPathComponent("padgate")
    }

    /// The XDG variable when it is an absolute path (the spec says to ignore a relative one), else
    /// `$HOME/<fallback>`.
    static func base(_ xdg: String?, orHome fallback: String, _ env: [String: String]) -> URL {
        if let xdg, xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg) }
        return home(env).appendingPathComponent(fallback)
    }

    static func home(_ env: [String: String]) -> URL {
        if let home = env["HOME"], home.hasPrefix("/") { return URL(fileURLWithPath: home) }
        return FileManager.default.homeDirectoryForCurrentUser
    }
}
