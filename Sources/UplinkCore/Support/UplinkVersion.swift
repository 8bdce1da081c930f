/// The version reported by `uplinkd --version` and in the probe User-Agent.
package enum UplinkVersion {
    package static let string = "0.3.0"
}
