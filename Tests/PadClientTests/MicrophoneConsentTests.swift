import MonotonicTime
@testable import PadClient
import PadDevices
import PadFamilies
import WireProtocol
import XCTest

/// A host asks to record a pad's microphone; the client records only a microphone it offered.
/// A refusal is settled before any device is touched, so these need no sound card.
final class MicrophoneConsentTests: XCTestCase {
    func testARequestForAMicrophoneTheUserRefusedIsIgnored() throws {
        var options = PadFeedback.Options()
        options.offersMicrophone = false
        let feedback = SessionFeedback(pad: pad("ds", kind: .dualSense), options: options)
        try feedback.apply(MicrophoneRequest(slot: PadSlot(0), ttlMillis: 2000))
        XCTAssertEqual(feedback.ignoredMicrophoneRequests, 1)
        var taken: [WireMessage] = []
        feedback.takeUplink { taken.append($0) }
        XCTAssertEqual(taken, [])
    }

    func testARequestForAPadWithoutAMicrophoneIsIgnored() throws {
        let feedback = SessionFeedback(pad: pad("xbox", kind: .xbox), options: PadFeedback.Options())
        try feedback.apply(MicrophoneRequest(slot: PadSlot(0), ttlMillis: 2000))
        XCTAssertEqual(feedback.ignoredMicrophoneRequests, 1)
    }
}
