import Foundation

/// Waits in an async test until `condition` holds, for at most `seconds` of the time this
/// waiter could run: a wait that overslept (the cooperative pool, as wide as the machine's cores,
/// was held by synchronous tests running beside it — on 2 shared cores, for minutes) counts as
/// one short step, not as the whole stall, so a loaded machine delays such a test instead of
/// failing it, while a condition that never holds still fails once the waiter has had its time.
/// Returns whether the condition held.
public func pollAsync(seconds: Double = 300, step: Duration = .milliseconds(5), _ condition: () throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let budget = Duration.milliseconds(Int64(seconds * 1_000))
    let longestCounted = step * 10
    var counted = Duration.zero
    while counted < budget {
        if try condition() { return true }
        let before = clock.now
        // A cancelled waiter (a time limit) stops at once instead of spinning through its budget.
        do { try await Task.sleep(for: step) } catch { return try condition() }
        counted += min(clock.now - before, longestCounted)
    }
    return try condition()
}

/// Waits on a thread until `condition` holds, for at most `seconds` of wall clock, checking
/// every millisecond. Returns whether the condition held.
public func poll(seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int64(seconds * 1_000))
    while clock.now < deadline {
        if try condition() { return true }
        usleep(1_000)
    }
    return try condition()
}
