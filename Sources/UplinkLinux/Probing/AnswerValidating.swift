import UplinkCore

/// Runs a probe's external validator on its HTTP answer. `completion` runs exactly
/// once, on the loop, with `validatorAccepted` set when there was one to run.
package protocol AnswerValidating: AnyObject {
    func validate(_ result: ProbeResult, timeoutMilliseconds: Int, completion: @escaping (ProbeResult) -> Void)
}
