import UplinkCore

/// Runs a probe's external validator (`validator = PATH ARG...`) as a child process of
/// the loop, beside the hooks and the same way: no shell, the body on stdin, the facts
/// in the environment, `ChildProcess.searchPath` as PATH, a time limit. Exit 0 means
/// the answer is valid.
package final class ValidatorRunner: AnswerValidating {
    private let loop: EventLoop

    package init(loop: EventLoop) {
        self.loop = loop
    }

    /// Passes `result` through, with `validatorAccepted` set when the probe has a
    /// validator and an HTTP answer came back. `completion` runs once, on the loop.
    package func validate(_ result: ProbeResult, timeoutMilliseconds: Int, completion: @escaping (ProbeResult) -> Void) {
        let loop = self.loop
        guard let command = result.request.probe.expectation.validator,
              case .response(var response) = result.outcome else {
            completion(result)
            return
        }
        let request = result.request
        let started = loop.nowMilliseconds
        do {
            _ = try ChildProcess(
                loop: loop, name: "validator \(command.path)", arguments: [command.path] + command.arguments,
                environment: [
                    "UPLINK_HTTP_STATUS=\(response.status)",
                    "UPLINK_PROBE_URL=\(request.probe.url)",
                    "UPLINK_INTERFACE=\(request.interface.value)",
                    ChildProcess.searchPath,
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
                    validated.elapsedMilliseconds += loop.nowMilliseconds - started
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
