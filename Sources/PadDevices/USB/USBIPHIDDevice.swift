import Foundation
import Glibc
import Logging
import MonotonicTime
import PadSystem
import Synchronization
import USBDevice

/// The device end of an emulated pad, whichever way the kernel sees it: a uhid device, or a USB
/// device on vhci-hcd. The pad feeds input reports and answers what the driver asks; the events
/// it reads are uhid's, whatever the transport.
package protocol HIDDeviceEnd: AnyObject, Sendable {
    /// Readable while `read()` has an event.
    var descriptor: FileDescriptor { get }
    func input(_ report: [UInt8]) throws
    func read() throws -> UHIDEvent?
    func replyGetReport(requestID: UInt32, data: [UInt8], error: UInt16) throws
    func replySetReport(requestID: UInt32, error: UInt16) throws
    func destroy() throws
}

extension UHIDDevice: HIDDeviceEnd {}

/// A pad shown to the host as a real USB device: attached to vhci-hcd through one end of a socket
/// pair, it answers USB/IP requests with the pad's own descriptors (`USBControlState`), gives the
/// driver's HID requests to the pad as uhid events, completes the interrupt IN transfers usbhid
/// keeps queued with the pad's input reports, and takes the audio function's isochronous
/// transfers at the pace a real device does (one packet a millisecond), so ALSA's clock runs true.
///
/// One thread serves the socket; `input` and the replies come from others. Every count is
/// bounded (`Limits`): the kernel side is trusted to follow USB/IP, but nothing it sends can make
/// this side grow without end. Closing the socket (or the process dying) detaches the device.
package final class USBIPHIDDevice: HIDDeviceEnd, @unchecked Sendable {
    enum Limits {
        /// usbhid keeps one interrupt IN transfer queued; a few more are tolerated.
        static let pendingInterruptIn = 8
        /// Input reports kept while no transfer waits; the newest win (a pad's state supersedes).
        static let queuedInput = 4
        /// HID requests awaiting the pad's answer, and events awaiting the pad's read.
        static let pendingRequests = 16
        static let events = 64
        /// Audio transfers waiting for their moment (snd-usb-audio queues a handful per stream).
        static let pendingIsochronous = 64
        /// A write the kernel does not take within this long ends the device (a stalled reader).
        static let sendTimeout: Duration = .seconds(2)
        /// How long an unplug waits for the last input report to reach the driver.
        static let flush: Duration = .milliseconds(100)
        /// How long an unplug waits for the kernel to remove the detached device (its drivers
        /// let go in the hub's thread, after the detach): a pad is gone when its unplug returns,
        /// as a uhid pad is, so the next pad made gets the numbers it freed.
        static let removal: Duration = .seconds(2)
        /// How far behind its schedule an isochronous endpoint catches up (completing what is
        /// queued at once) rather than start a new schedule from now: a device's clock does not
        /// slow when its server thread is held up, and a stream that stopped starts afresh.
        static let isochronousCatchUp: Duration = .milliseconds(20)
    }

    /// How the pad's interfaces are reached: the HID interface's endpoints and the audio streams'.
    package struct Endpoints: Sendable {
        package var hidIn: UInt8 = 0x84
        package var hidOut: UInt8 = 0x03
        /// Bytes of one microphone packet: 48 samples of 2 channels of 16 bits.
        package var microphonePacket = 192
    }

    package let devid: UInt32
    private let socket: OwnedDescriptor
    private var port: UInt32?
    private let endpoints: Endpoints
    /// Server thread only.
    private var control: USBControlState
    /// The request being handled, whole (its header at 0).
    private var buffer = [UInt8](repeating: 0, count: USBIPHIDDevice.largestRequest)
    /// What the socket gave and no request has taken yet: everything the kernel sent is read at
    /// each wake, so a pass handles all waiting requests (an audio stream queues a dozen).
    private var inbox = [UInt8](repeating: 0, count: 2 * USBIPHIDDevice.largestRequest)
    private var inboxStart = 0, inboxEnd = 0
    private static let largestRequest = USBIPLimits.headerSize + Int(USBIPLimits.maximumTransfer)
        + Int(USBIPLimits.maximumPackets) * USBIPLimits.isoPacketDescriptorSize
    private var packets: [USBIPIsoPacket] = []

    /// Guards everything below it.
    private let lock = NSLock()
    private var events: [UHIDEvent] = []
    private var awaitingPad: [UInt32: USBIPSubmit] = [:]
    private var interruptIn: [USBIPSubmit] = []
    private var queuedInput: [[UInt8]] = []
    private var isochronous: [(due: MonotonicInstant, submit: USBIPSubmit, packets: [USBIPIsoPacket])] = []
    /// The transfers a pass completes (server thread only; kept, so a pass allocates none).
    private var dueIsochronous: [(due: MonotonicInstant, submit: USBIPSubmit, packets: [USBIPIsoPacket])] = []
    private var nextFrame: [UInt8: MonotonicInstant] = [:]
    private var opened = false
    private var dropped = 0
    private var audioBytes = 0
    private let onAudioOut: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    private let onAudioIn: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)?
    /// Writes come from the server thread and from `input`/replies: one at a time.
    private let writeLock = NSLock()
    private var reply = [UInt8](repeating: 0, count: USBIPLimits.headerSize + Int(USBIPLimits.maximumTransfer)
                                                  + Int(USBIPLimits.maximumPackets) * USBIPLimits.isoPacketDescriptorSize)
    private let eventPipe = WakePipe()
    private let stopPipe = WakePipe()
    private var stopped = false
    /// Set before the device is detached on purpose: what the kernel side then does is no error.
    private let stopping = Atomic<Bool>(false)
    private let log = Logger(label: "padgate.devices.usb")

    /// Makes the socket pair, starts serving it and attaches the kernel's end to a free port.
    package convenience init(descriptors: USBDescriptors, audioUnits: [AudioFeatureUnit], mark: VHCI.Mark, endpoints: Endpoints = Endpoints(),
                             onAudioOut: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil,
                             onAudioIn: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)? = nil) throws {
        if let reason = VHCI.unavailableReason() { throw DeviceError.unsupported(reason) }
        let (ours, kernelEnd): (OwnedDescriptor, OwnedDescriptor)
        do { (ours, kernelEnd) = try OwnedDescriptor.streamPair() } catch { throw DeviceError.from(error, path: VHCI.directory) }
        self.init(serving: ours, descriptors: descriptors, audioUnits: audioUnits,
                  devid: mark.rawValue << 16 | UInt32.random(in: 1...0xffff), endpoints: endpoints, onAudioOut: onAudioOut, onAudioIn: onAudioIn)
        do {
            let port = try VHCI.attach(socket: kernelEnd.descriptor, devid: devid)
            lock.withLock { self.port = port }
        } catch {
            stop()
            throw error
        }
        kernelEnd.close()   // the kernel holds its own reference now
    }

    /// Serves USB/IP on `socket`, whose other end is the kernel's (or a test's).
    /// - Parameter onAudioOut: the bytes each isochronous OUT packet carries (the host played
    ///   them into the pad: its 4-channel 16-bit 48 kHz output), packet after packet, on the
    ///   serving thread, without a copy (the buffer is valid during the call only).
    /// - Parameter onAudioIn: fills each isochronous IN packet (the pad's microphone: 2 channels of
    ///   16 bits at 48 kHz, 1 ms a packet) as it completes, on the serving thread; nil: silence.
    package init(serving socket: OwnedDescriptor, descriptors: USBDescriptors, audioUnits: [AudioFeatureUnit], devid: UInt32, endpoints: Endpoints = Endpoints(),
                 onAudioOut: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil,
                 onAudioIn: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)? = nil) {
        self.socket = socket
        self.onAudioOut = onAudioOut
        self.onAudioIn = onAudioIn
        var timeout = timeval(tv_sec: Int(Limits.sendTimeout / .seconds(1)), tv_usec: 0)
        _ = setsockopt(socket.descriptor.rawValue, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        control = USBControlState(descriptors: descriptors, audioUnits: audioUnits)
        self.endpoints = endpoints
        self.devid = devid
        // The device's clock (its isochronous pace) and its input reports: input priority, as
        // the loops that carry input have (a busy machine must not slow the pad's audio clock).
        let thread = Thread { [self] in ThreadPriority.raisedForInput { serve() } }
        thread.name = "padgate-usbip"
        thread.start()
    }

    /// Whether the device has stopped serving (detached, or the kernel side broke the protocol).
    package var hasStopped: Bool { lock.withLock { stopped } }

    deinit { try? destroy() }

    package var descriptor: FileDescriptor { eventPipe.descriptor }
    /// Input reports superseded before usbhid asked for them.
    package var droppedInputs: Int { lock.withLock { dropped } }
    /// Bytes of audio the host's audio stack has played into the pad.
    package var audioBytesReceived: Int { lock.withLock { audioBytes } }

    /// Detaches the device (once): its drivers let go and its nodes disappear. The last input
    /// report (a released pad, when a session ends) reaches the driver first: usbhid queues its
    /// next transfer only after it has handed the previous report on, so a new one waiting means
    /// the last is through. A uhid pad's input is taken synchronously; this gives a USB pad the same.
    package func destroy() throws {
        let deadline = MonotonicInstant.now + Limits.flush
        while lock.withLock({ !stopped && (!queuedInput.isEmpty || interruptIn.isEmpty) && opened }), MonotonicInstant.now < deadline {
            usleep(2_000)
        }
        let port = lock.withLock { () -> UInt32? in defer { self.port = nil }; return self.port }
        stopping.store(true, ordering: .releasing)
        if let port, (try? VHCI.detach(port: port, waitingUpTo: Limits.removal)) == false {
            log.warning("usb/ip: the kernel had not removed the pad on port \(port) \(Limits.removal) after it was detached")
        }
        stop()
    }

    private func stop() {
        stopping.store(true, ordering: .releasing)
        let first = lock.withLock { defer { stopped = true }; return !stopped }
        guard first else { return }
        stopPipe.wake()
        socket.shutdownBothWays()
    }

    // MARK: The pad's side

    package func input(_ report: [UInt8]) throws {
        lock.lock()
        guard !interruptIn.isEmpty else {
            if queuedInput.count >= Limits.queuedInput { queuedInput.removeFirst(); dropped += 1 }
            queuedInput.append(report)
            lock.unlock()
            return
        }
        let submit = interruptIn.removeFirst()
        lock.unlock()
        try complete(submit, data: report)
    }

    package func read() throws -> UHIDEvent? {
        lock.withLock {
            guard !events.isEmpty else { eventPipe.drain(); return nil }
            return events.removeFirst()
        }
    }

    package func replyGetReport(requestID: UInt32, data: [UInt8], error: UInt16) throws {
        try answerPad(requestID, data: data, error: error)
    }

    package func replySetReport(requestID: UInt32, error: UInt16) throws {
        try answerPad(requestID, data: [], error: error)
    }

    /// Completes the control transfer a HID request came in (an unlinked one is gone: nothing to do).
    private func answerPad(_ requestID: UInt32, data: [UInt8], error: UInt16) throws {
        guard let submit = lock.withLock({ awaitingPad.removeValue(forKey: requestID) }) else { return }
        if error != 0 { try stall(submit) } else { try complete(submit, data: data) }
    }

    private func post(_ event: UHIDEvent) {
        lock.withLock {
            if events.count >= Limits.events { events.removeFirst() }
            events.append(event)
        }
        eventPipe.wake()
    }

    // MARK: The kernel's side

    private func serve() {
        defer { post(.close) }
        // One poll set for the device's life: no allocation per request.
        var set = PollSet<Bool>()
        set.add(socket.descriptor, true)
        set.add(stopPipe.descriptor, false)
        while !lock.withLock({ stopped }) {
            let due = lock.withLock { isochronous.reduce(nil as MonotonicInstant?) { earliest, entry in min(earliest ?? entry.due, entry.due) } }
            var request = false, stopping = false
            set.wait(timeout: due.map { max(.zero, $0 - .now) }) { isSocket, ready in
                if isSocket { request = ready.readable || ready.hungUp } else { stopping = true }
            }
            if stopping { return }
            do {
                if request {
                    guard try readRequests() else { return }
                }
                try completeDueIsochronous()
            } catch {
                if !self.stopping.load(ordering: .acquiring) { log.error("usb/ip: \(error); the pad is detached") }
                stop()
                return
            }
        }
    }

    /// Reads what the socket has and handles every whole request in it; false when the kernel
    /// closed its end.
    private func readRequests() throws -> Bool {
        if inboxStart > 0 {
            inbox.withUnsafeMutableBytes { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + inboxStart, inboxEnd - inboxStart)
            }
            inboxEnd -= inboxStart
            inboxStart = 0
        }
        let end = inboxEnd
        guard let received = try inbox.withUnsafeMutableBytes({ bytes throws(SystemCallError) in
            try socket.receiveAvailable(into: UnsafeMutableRawBufferPointer(rebasing: bytes[end...]))
        }) else { return true }
        if received == 0 { return false }
        inboxEnd += received
        while inboxEnd - inboxStart >= USBIPLimits.headerSize {
            let request = try inbox.withUnsafeBytes { bytes throws(USBIPError) in
                try USBIPCodec.request(UnsafeRawBufferPointer(rebasing: bytes[inboxStart..<(inboxStart + USBIPLimits.headerSize)]))
            }
            var length = USBIPLimits.headerSize
            if case .submit(let submit) = request { length += submit.outLength + submit.descriptorLength }
            guard inboxEnd - inboxStart >= length else { break }
            // The request whole at the start of `buffer`, where its handlers read it.
            buffer.withUnsafeMutableBytes { out in
                inbox.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + inboxStart, byteCount: length) }
            }
            inboxStart += length
            switch request {
            case .submit(let submit): try handle(submit)
            case .unlink(let unlink): try handle(unlink)
            }
        }
        return true
    }

    private func outData(_ submit: USBIPSubmit) -> [UInt8] {
        Array(buffer[USBIPLimits.headerSize..<(USBIPLimits.headerSize + submit.outLength)])
    }

    private func handle(_ submit: USBIPSubmit) throws {
        let address = submit.endpoint | (submit.direction == .in ? 0x80 : 0)
        if submit.endpoint == 0 { return try handleControl(submit) }
        guard control.isActive(endpoint: address), let (_, endpoint) = control.descriptors.endpoint(address) else {
            return try stall(submit)
        }
        switch endpoint.transferType {
        case 3 where address == endpoints.hidIn:
            lock.lock()
            let firstOpen = !opened
            opened = true
            if !queuedInput.isEmpty {
                let report = queuedInput.removeFirst()
                lock.unlock()
                if firstOpen { post(.open) }
                return try complete(submit, data: report)
            }
            if interruptIn.count >= Limits.pendingInterruptIn {
                lock.unlock()
                return try stall(submit)
            }
            interruptIn.append(submit)
            lock.unlock()
            if firstOpen { post(.open) }
        case 3 where address == endpoints.hidOut:
            post(.output(outData(submit), .output))
            try complete(submit, data: [], actualLength: submit.bufferLength)
        case 1:
            try queueIsochronous(submit, interval: endpoint.interval)
        default:
            try stall(submit)
        }
    }

    private func handleControl(_ submit: USBIPSubmit) throws {
        let data = submit.direction == .out ? outData(submit) : []
        switch control.handle(submit.setup, data: data) {
        case .answer(let bytes):
            if submit.direction == .in {
                try complete(submit, data: Array(bytes.prefix(min(Int(submit.setup.length), Int(submit.bufferLength)))))
            } else {
                try complete(submit, data: [], actualLength: submit.bufferLength)
            }
        case .stall:
            try stall(submit)
        case .hid(let request):
            switch request {
            case .setReport(type: 2, _, let report):
                // An output report through the control pipe: the pad takes it as from the OUT endpoint.
                post(.output(report, .output))
                try complete(submit, data: [], actualLength: submit.bufferLength)
            case .setReport(let type, let id, let report):
                try awaitPad(submit, .setReport(requestID: submit.seqnum, reportNumber: id, type: Self.reportType(type), data: report))
            case .getReport(let type, let id, _):
                try awaitPad(submit, .getReport(requestID: submit.seqnum, reportNumber: id, type: Self.reportType(type)))
            }
        }
    }

    /// Hands a HID request to the pad; the control transfer completes with the pad's answer
    /// (`replyGetReport`, `replySetReport`), or stalls at once when too many already wait.
    private func awaitPad(_ submit: USBIPSubmit, _ event: UHIDEvent) throws {
        let taken = lock.withLock { () -> Bool in
            guard awaitingPad.count < Limits.pendingRequests else { return false }
            awaitingPad[submit.seqnum] = submit
            return true
        }
        guard taken else { return try stall(submit) }
        post(event)
    }

    /// USB's report types (1 input, 2 output, 3 feature) as uhid's.
    private static func reportType(_ type: UInt8) -> HIDReportType {
        switch type { case 1: .input; case 2: .output; default: .feature }
    }

    /// Isochronous transfers complete at the device's pace: one packet per service interval
    /// (2^(bInterval-1) microframes at high speed), each endpoint's transfers end to end.
    private func queueIsochronous(_ submit: USBIPSubmit, interval: UInt8) throws {
        let count = Int(submit.packetCount)
        var list: [USBIPIsoPacket] = []
        list.reserveCapacity(count)
        try buffer.withUnsafeBytes { bytes in
            let descriptors = UnsafeRawBufferPointer(rebasing: bytes[(USBIPLimits.headerSize + submit.outLength)...])
            for i in 0..<count {
                let packet = USBIPIsoPacket(descriptors, index: i)
                guard packet.offset <= UInt32(submit.bufferLength), packet.length <= UInt32(submit.bufferLength) - packet.offset else {
                    throw USBIPError.packetOutsideTransfer(offset: packet.offset, length: packet.length, transfer: submit.bufferLength)
                }
                list.append(packet)
            }
        }
        if submit.direction == .out {
            lock.withLock { audioBytes += submit.outLength }
            if let onAudioOut {
                // The packets' payloads in order: each packet's length within the transfer (checked above).
                buffer.withUnsafeBytes { bytes in
                    for packet in list {
                        let start = USBIPLimits.headerSize + Int(packet.offset)
                        onAudioOut(UnsafeRawBufferPointer(rebasing: bytes[start..<start + Int(packet.length)]))
                    }
                }
            }
        }
        let period = Duration.microseconds(125 << max(0, min(Int(interval) - 1, 15)))
        let now = MonotonicInstant.now
        let full = lock.withLock { () -> Bool in
            guard isochronous.count < Limits.pendingIsochronous else { return true }
            let start = max(nextFrame[submit.endpoint | (submit.direction == .in ? 0x80 : 0)] ?? now, now - Limits.isochronousCatchUp)
            let due = start + period * max(count, 1)
            nextFrame[submit.endpoint | (submit.direction == .in ? 0x80 : 0)] = due
            isochronous.append((due, submit, list))
            return false
        }
        if full { try stall(submit) }
    }

    private func completeDueIsochronous() throws {
        let now = MonotonicInstant.now
        lock.withLock {
            dueIsochronous.removeAll(keepingCapacity: true)
            var i = 0
            while i < isochronous.count {
                if isochronous[i].due <= now { dueIsochronous.append(isochronous.remove(at: i)) } else { i += 1 }
            }
        }
        for entry in dueIsochronous {
            try completeIsochronous(entry.submit, packets: entry.packets)
        }
    }

    private func handle(_ unlink: USBIPUnlink) throws {
        let found = lock.withLock { () -> Bool in
            if awaitingPad.removeValue(forKey: unlink.victim) != nil { return true }
            if let i = interruptIn.firstIndex(where: { $0.seqnum == unlink.victim }) { interruptIn.remove(at: i); return true }
            if let i = isochronous.firstIndex(where: { $0.submit.seqnum == unlink.victim }) { isochronous.remove(at: i); return true }
            return false
        }
        try send { out in
            USBIPCodec.writeUnlinkReply(to: unlink, status: found ? -ECONNRESET : 0, into: out)
            return USBIPLimits.headerSize
        }
    }

    // MARK: Replies

    private func complete(_ submit: USBIPSubmit, data: [UInt8], actualLength: Int32? = nil) throws {
        let length = min(data.count, Int(submit.bufferLength))
        try send { out in
            USBIPCodec.writeSubmitReply(to: submit, status: 0, actualLength: actualLength ?? Int32(length), into: out)
            if submit.direction == .in {
                data.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[USBIPLimits.headerSize...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
                return USBIPLimits.headerSize + length
            }
            return USBIPLimits.headerSize
        }
    }

    /// Completes an isochronous transfer whole: every packet done. An IN transfer's packets carry
    /// the microphone (what `onAudioIn` gives, else silence), written straight into the reply.
    private func completeIsochronous(_ submit: USBIPSubmit, packets: [USBIPIsoPacket]) throws {
        let isIn = submit.direction == .in
        try send { out in
            var inBytes = 0
            if isIn { for packet in packets { inBytes += min(Int(packet.length), endpoints.microphonePacket) } }
            let descriptors = UnsafeMutableRawBufferPointer(rebasing: out[(USBIPLimits.headerSize + inBytes)...])
            var offset = USBIPLimits.headerSize, total: UInt32 = 0
            for i in packets.indices {
                var packet = packets[i]
                if isIn {
                    let length = min(Int(packet.length), endpoints.microphonePacket)
                    let region = UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + length)])
                    if let onAudioIn { onAudioIn(region) } else { memset(region.baseAddress!, 0, length) }
                    offset += length
                    packet.actualLength = UInt32(length)
                } else {
                    packet.actualLength = packet.length
                }
                packet.status = 0
                total += packet.actualLength
                packet.write(into: descriptors, index: i)
            }
            USBIPCodec.writeSubmitReply(to: submit, status: 0, actualLength: Int32(total), packetCount: Int32(packets.count), into: out)
            return USBIPLimits.headerSize + inBytes + packets.count * USBIPLimits.isoPacketDescriptorSize
        }
    }

    /// A stall (-EPIPE), as a device answers a request it does not take.
    private func stall(_ submit: USBIPSubmit) throws {
        try send { out in
            USBIPCodec.writeSubmitReply(to: submit, status: -EPIPE, actualLength: 0, into: out)
            return USBIPLimits.headerSize
        }
    }

    /// Fills the reply buffer with `fill` (which returns the length) and sends it whole. Never
    /// SIGPIPE: the kernel's end closes when the device is detached, and a write racing that is
    /// an error for this device, not the end of the process.
    private func send(_ fill: (UnsafeMutableRawBufferPointer) -> Int) throws {
        try writeLock.withLock {
            try reply.withUnsafeMutableBytes { out in
                let length = fill(out)
                try socket.sendAll(UnsafeRawBufferPointer(rebasing: out[..<length]))
            }
        }
    }
}
