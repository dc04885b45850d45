/// Runs of sound in what an output played (frames as left, right pairs): a silence of `gap`
/// frames or more between two sounds starts a new run, as a hand (or the device bench's onset
/// count) feels two bursts.
func soundRuns<S: Sequence>(_ frames: S, gap: Int) -> Int where S.Element == (Int8, Int8) {
    var runs = 0, silence = Int.max
    for (left, right) in frames {
        if left != 0 || right != 0 {
            if silence >= gap { runs += 1 }
            silence = 0
        } else if silence < Int.max { silence += 1 }
    }
    return runs
}
