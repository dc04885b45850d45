import Glibc

/// Files a person names on the command line, read and written the one way: a read is bounded
/// and takes only a regular file (decided on the opened descriptor, so nothing can be swapped in
/// between the check and the read); a write never replaces what is not a regular file.
public enum UserFile {
    /// What a path is, in the words an error uses ("is a FIFO, not a regular file").
    public enum Kind: Equatable, Sendable, CustomStringConvertible {
        case regular, directory, fifo, characterDevice, blockDevice, socket, other

        public init(mode: mode_t) {
            switch mode & S_IFMT {
            case S_IFREG: self = .regular
            case S_IFDIR: self = .directory
            case S_IFIFO: self = .fifo
            case S_IFCHR: self = .characterDevice
            case S_IFBLK: self = .blockDevice
            case S_IFSOCK: self = .socket
            default: self = .other
            }
        }

        public var description: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .fifo: "a FIFO"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            case .socket: "a socket"
            case .other: "not a file"
            }
        }
    }

    // MARK: reading

    /// Why a file was not read; each reads after the file's name ("'x.wav' is a FIFO, …").
    public enum ReadFailure: Error, Equatable, Sendable, CustomStringConvertible {
        case missing
        case notRegular(Kind)
        case tooLarge(size: Int, limit: Int)
        case grew(limit: Int)
        case system(SystemCallError)

        public var description: String {
            switch self {
            case .missing: "does not exist"
            case .notRegular(let kind): "is \(kind), not a regular file; give a file"
            case .tooLarge(let size, let limit): "is \(UserFile.mebibytes(size)) MiB; at most \(UserFile.mebibytes(limit)) MiB is read"
            case .grew(let limit): "grew past \(UserFile.mebibytes(limit)) MiB while it was read"
            case .system(let error) where error.errno == .permissionDenied || error.errno == .notPermitted:
                "cannot be read: \(error.errno) (check its permissions)"
            case .system(let error): "cannot be read: \(error)"
            }
        }
    }

    /// A regular file's bytes, at most `limit` of them. The size is checked on the opened
    /// descriptor before anything is read, so a sparse or huge file costs nothing; a FIFO or a
    /// device is never read at all (a FIFO would block, /dev/zero would never end).
    public static func read(_ path: String, limit: Int) throws(ReadFailure) -> [UInt8] {
        // A first look by name, so a device is not even opened (opening one can have effects).
        var info = stat()
        if stat(path, &info) != 0 {
            throw Errno.current == .noSuchFile ? .missing : .system(SystemCallError("stat", errno: .current))
        }
        guard Kind(mode: info.st_mode) == .regular else { throw .notRegular(Kind(mode: info.st_mode)) }
        // O_NONBLOCK: were a FIFO swapped in since, opening it must not wait for a writer.
        let file: OwnedDescriptor
        do { file = try OwnedDescriptor("open") { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) } } catch {
            throw error.errno == .noSuchFile ? .missing : .system(error)
        }
        // The check that counts: what was opened.
        guard fstat(file.rawValue, &info) == 0 else { throw .system(SystemCallError("fstat", errno: .current)) }
        guard Kind(mode: info.st_mode) == .regular else { throw .notRegular(Kind(mode: info.st_mode)) }
        let size = Int(info.st_size)
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        // One byte more than the size, so a file that grows after fstat is seen doing so. procfs
        // and sysfs say 0: one large first read, which a kernel list (seq_file) fills under its
        // own lock, so the text is one moment's and not two reads' apart.
        var bytes = [UInt8](repeating: 0, count: size == 0 ? min(1 << 16, limit + 1) : size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= limit else { throw .grew(limit: limit) }
                bytes += [UInt8](repeating: 0, count: min(1 << 16, limit + 1 - bytes.count))
            }
            let result: Result<Int, SystemCallError> = bytes.withUnsafeMutableBytes { buffer in
                do throws(SystemCallError) { return .success(try file.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))) }
                catch { return .failure(error) }
            }
            let n: Int
            switch result {
            case .success(let read): n = read
            case .failure(let error): throw .system(error)
            }
            if n == 0 { break }
            count += n
        }
        guard count <= limit else { throw .grew(limit: limit) }
        bytes.removeSubrange(count...)
        return bytes
    }

    static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }

    // MARK: writing

    /// Why an output was not written; each reads after the file's name.
    public enum WriteFailure: Error, Equatable, Sendable, CustomStringConvertible {
        /// A directory, a socket or a block device: nothing padgate writes belongs there.
        case notWritable(Kind)
        case missingFolder(String)
        case system(SystemCallError)

        public var description: String {
            switch self {
            case .notWritable(.directory): "is a directory: name a file in it"
            case .notWritable(let kind): "is \(kind), not a file, FIFO or terminal to write to"
            case .missingFolder(let folder): "cannot be written: the folder '\(folder)' does not exist"
            case .system(let error): "cannot be written: \(error)"
            }
        }
    }

    /// A file being written. A regular file (or a name that is none yet) is written beside itself
    /// and renamed over the name at `commit()`, so a reader never sees half of it and a failed run
    /// leaves the old one; a FIFO, a terminal or a device such as /dev/full is written straight
    /// into (a rename would put a regular file where the node was), and a name for an open
    /// descriptor (/dev/stdout, /dev/fd/N) writes into that descriptor. Not committed, the
    /// temporary file is removed.
    public final class Output {
        private let file: OwnedDescriptor?
        private let target: FileDescriptor
        /// The temporary file and the name it is renamed to; nil when written straight into.
        private var rename: (temporary: String, final: String)?

        /// `whole`: a regular file replaced at `commit()`, as above. `stream`: a regular file
        /// written in place as the data comes (a recording: read while it grows, and what was
        /// written stays if padgate is killed); nodes and descriptors as above either way.
        public enum Mode: Sendable { case whole, stream }

        public init(path: String, mode: Mode = .whole) throws(WriteFailure) {
            if let descriptor = UserFile.openDescriptor(named: path) {
                // Whatever was printed to it so far goes first.
                fflush(nil)
                file = nil; target = descriptor
                return
            }
            var info = stat()
            if stat(path, &info) == 0 {
                let kind = Kind(mode: info.st_mode)
                switch kind {
                case .fifo, .characterDevice:
                    let opened: OwnedDescriptor
                    do { opened = try OwnedDescriptor("open") { open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY) } } catch { throw .system(error) }
                    // The node may have been swapped since stat: decide again on what was opened.
                    guard fstat(opened.rawValue, &info) == 0, [Kind.fifo, .characterDevice].contains(Kind(mode: info.st_mode)) else {
                        throw .notWritable(Kind(mode: info.st_mode))
                    }
                    file = opened; target = opened.descriptor
                    return
                case .regular: break
                default: throw .notWritable(kind)
                }
            } else if Errno.current != .noSuchFile {
                throw .system(SystemCallError("stat", errno: .current))
            }
            if mode == .stream {
                // O_NOFOLLOW-free on purpose: a link to a regular file writes that file, as a shell's > does.
                let opened: OwnedDescriptor
                do { opened = try OwnedDescriptor("open") { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0o666) } } catch {
                    throw error.errno == .noSuchFile ? .missingFolder(UserFile.folder(of: UserFile.resolved(path))) : .system(error)
                }
                guard fstat(opened.rawValue, &info) == 0, Kind(mode: info.st_mode) == .regular else { throw .notWritable(Kind(mode: info.st_mode)) }
                file = opened; target = opened.descriptor
                return
            }
            // A symbolic link to a regular file: the file it names is replaced, the link stays.
            let final = UserFile.resolved(path)
            let folder = UserFile.folder(of: final)
            let base = final.lastIndex(of: "/").map { String(final[final.index(after: $0)...]) } ?? final
            var attempt = 0
            while true {
                let temporary = folder + "/.\(base).\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp"
                do {
                    // 0666 and the umask, as any new file: the rename keeps what the name would have had.
                    let opened = try OwnedDescriptor("open") { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666) }
                    if info.st_mode & S_IFMT == S_IFREG { _ = fchmod(opened.rawValue, info.st_mode & 0o7777) }
                    file = opened; target = opened.descriptor
                    rename = (temporary, final)
                    return
                } catch {
                    attempt += 1
                    if error.errno == Errno(rawValue: EEXIST) && attempt < 8 { continue }
                    throw error.errno == .noSuchFile ? .missingFolder(folder.isEmpty ? "/" : folder) : .system(error)
                }
            }
        }

        public func write(_ bytes: some Collection<UInt8>) throws(WriteFailure) {
            let result: Result<Void, SystemCallError>? = bytes.withContiguousStorageIfAvailable { buffer in
                do throws(SystemCallError) { try target.writeAll(UnsafeRawBufferPointer(buffer)); return .success(()) } catch { return .failure(error) }
            }
            switch result {
            case .success?: return
            case .failure(let error)?: throw .system(error)
            case nil: try write(Array(bytes))
            }
        }

        /// The written file under its name (a rename); written straight into, nothing more to do.
        public func commit() throws(WriteFailure) {
            guard let (temporary, final) = rename else { return }
            rename = nil
            defer { file?.close() }
            guard Glibc.rename(temporary, final) == 0 else {
                let error = SystemCallError("rename", errno: .current)
                unlink(temporary)
                throw .system(error)
            }
        }

        deinit {
            if let (temporary, _) = rename { unlink(temporary) }
        }
    }

    /// Writes `bytes` to `path` as `Output` does, whole or not at all.
    public static func write(_ bytes: some Collection<UInt8>, to path: String) throws(WriteFailure) {
        let output = try Output(path: path)
        try output.write(bytes)
        try output.commit()
    }

    /// The descriptor a name such as /dev/stdout (a link to /proc/self/fd/1) or /dev/fd/3 stands
    /// for, when it is open; nil for any other name.
    static func openDescriptor(named path: String) -> FileDescriptor? {
        var current = path
        for _ in 0..<8 {
            for prefix in ["/proc/self/fd/", "/dev/fd/"] where current.hasPrefix(prefix) {
                guard let number = CInt(current.dropFirst(prefix.count)), fcntl(number, F_GETFD) != -1 else { return nil }
                return FileDescriptor(rawValue: number)
            }
            guard let link = readLink(current) else { return nil }
            current = link.hasPrefix("/") ? link : folder(of: current) + "/" + link
        }
        return nil
    }

    /// The path with its symbolic links followed; the path itself when it names nothing yet.
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "" : String(path[..<slash])
    }
}
