import Foundation
import XCTest
@testable import Transport

/// The XDG base-directory rules, with `$HOME` read from the environment.
final class PadgatePathsTests: XCTestCase {
    func testHomeAndXDGVariablesAreHonoured() {
        let cases: [([String: String], state: String, config: String)] = [
            (["HOME": "/tmp/x"], "/tmp/x/.local/state/padgate", "/tmp/x/.config/padgate"),
            (["HOME": "/tmp/x", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "/c"], "/s/padgate", "/c/padgate"),
            // A relative XDG variable is invalid and ignored, as the spec says.
            (["HOME": "/tmp/x", "XDG_STATE_HOME": "rel", "XDG_CONFIG_HOME": ""], "/tmp/x/.local/state/padgate", "/tmp/x/.config/padgate"),
            (["HOME": "/tmp/x", "PADGATE_STATE_DIR": "/p"], "/p", "/p/config"),
        ]
        for (env, state, config) in cases {
            XCTAssertEqual(PadgatePaths.stateDirectory(env).path, state, "\(env)")
            XCTAssertEqual(PadgatePaths.configDirectory(env).path, config, "\(env)")
        }
    }

    func testARelativeRuntimeDirectoryIsRefusedNotIgnored() throws {
        XCTAssertThrowsError(try PadgatePaths.checkedRuntimeDirectory(["PADGATE_RUNTIME_DIR": "run/padgate", "XDG_RUNTIME_DIR": "/x"])) { error in
            XCTAssertTrue("\(error)".contains("PADGATE_RUNTIME_DIR='run/padgate' is not an absolute path"), "\(error)")
        }
        XCTAssertEqual(try PadgatePaths.checkedRuntimeDirectory(["PADGATE_RUNTIME_DIR": "/r"]).path, "/r")
        XCTAssertEqual(try PadgatePaths.checkedRuntimeDirectory(["XDG_RUNTIME_DIR": "/x"]).path, "/x/padgate")
    }
}
