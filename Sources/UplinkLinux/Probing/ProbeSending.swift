import UplinkCore

/// Sends one HTTP probe. `completion` runs exactly once, on the loop, whatever happens
/// (a probe that cannot even start reports a failure).
package protocol ProbeSending: AnyObject {
    func send(_ request: ProbeRequest, settings: ProbeSettings, completion: @escaping (ProbeResult) -> Void)
}
