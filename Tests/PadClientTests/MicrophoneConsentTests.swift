import HIDCodecs
import MonotonicTime
@testable import PadClient
import PadDevices
import PadFamilies
import WireProtocol
import XCTest

/// A host asks to record a pad's microphone; the client records only a microphone it offered.
/// A refusal is settled before any device is touched, so these need no sound card.
final class MicrophoneConsentTests: XCTestCase {
    /// A session's feedback for `kind` that has been asked once to record.
    func asked(_ kind: PadKind, offering: Bool) throws -> SessionFeedback {
        var options = PadFeedback.Options()
        options.offersMicrophone = offering
        let feedback = SessionFeedback(pad: pad("pad", kind: kind), options: options)
        do {
            try feedback.apply(MicrophoneRequest(slot: PadSlot(0), sequence: WireSequence(0), ttlMillis: 2000))
        } catch is MicrophoneNotOffered {
            // Said once (the forwarder logs it); later requests are only counted.
            try feedback.apply(MicrophoneRequest(slot: PadSlot(0), sequence: WireSequence(1), ttlMillis: 2000))
            XCTAssertEqual(feedback.ignoredMicrophoneRequests, 2)
            return feedback
        }
        return feedback
    }

    func testARequestForAMicrophoneTheUserRefusedIsIgnored() throws {
        let feedback = try asked(.dualSense, offering: false)
        XCTAssertEqual(feedback.ignoredMicrophoneRequests, 2, "refused, said once, then counted")
        var taken: [WireMessage] = []
        feedback.takeUplink { taken.append($0) }
        XCTAssertEqual(taken, [])
    }

    func testTheFirstIgnoredRequestSaysWhy() {
        var options = PadFeedback.Options()
        options.offersMicrophone = false
        let feedback = SessionFeedback(pad: pad("pad", kind: .dualSense), options: options)
        XCTAssertThrowsError(try feedback.apply(MicrophoneRequest(slot: PadSlot(0), sequence: WireSequence(0), ttlMillis: 2000))) { error in
            XCTAssertTrue("\(error)".contains("forward --microphone"), "\(error)")
        }
        XCTAssertNoThrow(try feedback.apply(MicrophoneRequest(slot: PadSlot(0), sequence: WireSequence(1), ttlMillis: 2000)))
    }

    func testTheMicrophoneIsOfferedOnlyWhenTheUserAsks() {
        XCTAssertFalse(PadFeedback.Options().offersMicrophone, "off unless forward --microphone")
        let usb = pad("ds", kind: .dualSense)
        XCTAssertFalse(usb.wireCapabilities(offeringMicrophone: false).contains(.microphone))
        XCTAssertTrue(usb.wireCapabilities(offeringMicrophone: true).contains(.microphone))
    }

    func testARequestForAPadWithoutAMicrophoneIsIgnored() throws {
        XCTAssertEqual(try asked(.xbox, offering: true).ignoredMicrophoneRequests, 2)
    }
}

/// The client's side of the lease: renewals extend it, a stop ends it, an overtaken renewal
/// changes nothing, and no request keeps it past 2 s.
final class MicrophoneLeaseTests: XCTestCase {
    let t0 = MonotonicInstant.origin + .seconds(50)

    func request(_ sequence: UInt16, _ ttl: UInt16) -> MicrophoneRequest {
        MicrophoneRequest(slot: PadSlot(0), sequence: WireSequence(sequence), ttlMillis: ttl)
    }

    func testRenewalsStopsAndAnOvertakenRenewal() {
        var lease = MicrophoneLease()
        XCTAssertFalse(lease.lasts(at: t0), "no request: no recording")
        XCTAssertTrue(lease.apply(request(7, 2000), at: t0))
        XCTAssertTrue(lease.lasts(at: t0 + .milliseconds(1999)))
        XCTAssertFalse(lease.lasts(at: t0 + .milliseconds(2000)), "lapsed without a renewal")
        XCTAssertTrue(lease.apply(request(8, 2000), at: t0 + .milliseconds(500)))
        XCTAssertTrue(lease.lasts(at: t0 + .milliseconds(2400)), "renewed from its arrival")
        // The stop (9) arrives before the renewal sent ahead of it (8 again, reordered): stopped.
        XCTAssertTrue(lease.apply(request(9, 0), at: t0 + .milliseconds(600)))
        XCTAssertFalse(lease.lasts(at: t0 + .milliseconds(600)))
        XCTAssertFalse(lease.apply(request(8, 2000), at: t0 + .milliseconds(601)), "older than the stop")
        XCTAssertFalse(lease.lasts(at: t0 + .milliseconds(601)))
        // Numbers wrap; a request can never hold it past 2 s.
        var wrapped = MicrophoneLease()
        XCTAssertTrue(wrapped.apply(request(0xFFFF, 2000), at: t0))
        XCTAssertTrue(wrapped.apply(request(0, 2000), at: t0 + .milliseconds(10)), "0 follows 0xFFFF")
        XCTAssertFalse(wrapped.lasts(at: t0 + .milliseconds(2010)))
    }
}
