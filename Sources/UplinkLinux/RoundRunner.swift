import Glibc
import UplinkCore

/// Runs one probe round for one uplink on the event loop: every probe over every
/// family in parallel, then the external validators of the probes that have one (as
/// child processes of the loop), then hands the results to the core's planner.
public final class RoundRunner {
    private let loop: EventLoop
    private let prober: HTTPProber

    public init(loop: EventLoop, prober: HTTPProber) {
        self.loop = loop
        self.prober = prober
    }

    /// Starts a round; `completion` gets the results in request order, always exactly
    /// once, on the loop. A probe libcurl refuses to start counts as a failed probe.
    public func run(_ requests: [ProbeRequest], settings: ProbeSettings, validatorTimeoutMilliseconds: Int,
                    completion: @escaping ([ProbeResult]) -> Void) {
        guard !requests.isEmpty else {
            loop.schedule(afterMilliseconds: 0) { completion([]) }
            return
        }
        let round = Round(count: requests.count, completion: completion)
        for (slot, request) in requests.enumerated() {
            do {
                try prober.start(request, settings: settings) { [loop] result in
                    RoundRunner.validate(result, loop: loop, timeoutMilliseconds: validatorTimeoutMilliseconds) { validated in
                        round.fill(slot, with: validated)
                    }
                }
            } catch {
                Log.error("cannot start probe \(request.probe.name) on \(request.interface): \(error)")
                let failed = ProbeResult(request: request, outcome: .failure(.other(code: error.code, message: error.message)),
                                         elapsedMilliseconds: 0, bytes: 0)
                // Delivered from the loop, like every other result.
                loop.schedule(afterMilliseconds: 0) { round.fill(slot, with: failed) }
            }
        }
    }

    /// Results of one round, in request order, delivered once all have arrived.
    private final class Round {
        var slots: [ProbeResult?]
        var remaining: Int
        let completion: ([ProbeResult]) -> Void

        init(count: Int, completion: @escaping ([ProbeResult]) -> Void) {
            slots = Array(repeating: nil, count: count)
            remaining = count
            self.completion = completion
        }

        func fill(_ slot: Int, with result: ProbeResult) {
            slots[slot] = result
            remaining -= 1
            if remaining == 0 { completion(slots.compactMap { $0 }) }
        }
    }

    /// Runs the probe's external validator, if it has one and an answer came back:
    /// the body on stdin, the facts in the environment, no shell; exit 0 means valid.
    static func validate(_ result: ProbeResult, loop: EventLoop, timeoutMilliseconds: Int,
                         completion: @escaping (ProbeResult) -> Void) {
        guard let command = result.request.probe.expectation.validator,
              case .response(var response) = result.outcome else {
            completion(result)
            return
        }
        let request = result.request
        let started = MonotonicClock.nowMilliseconds()
        do {
            _ = try ChildProcess(
                loop: loop, name: "validator \(command.path)", arguments: [command.path] + command.arguments,
                environment: [
                    "UPLINK_HTTP_STATUS=\(response.status)",
                    "UPLINK_PROBE_URL=\(request.probe.url)",
                    "UPLINK_INTERFACE=\(request.interface.value)",
                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                ],
                input: response.body, timeoutMilliseconds: timeoutMilliseconds, killGraceMilliseconds: 1_000,
                onLine: { line in Log.info("validator \(command.path): \(line)") },
                completion: { termination in
                    response.validatorAccepted = termination.status == 0 && !termination.timedOut
                    if response.validatorAccepted != true {
                        Log.info("validator \(command.path) rejected the answer of \(request.probe.url) on \(request.interface) (exit \(termination.status))")
                    }
                    var validated = result
                    validated.outcome = .response(response)
                    validated.elapsedMilliseconds += MonotonicClock.nowMilliseconds() - started
                    completion(validated)
                })
        } catch {
            Log.warning("validator \(command.path) for \(request.probe.url): \(error)")
            response.validatorAccepted = false
            var validated = result
            validated.outcome = .response(response)
            completion(validated)
        }
    }
}
