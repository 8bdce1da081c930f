/// The version reported by `uplinkd --version` and in the probe User-Agent.
public enum UplinkVersion {
    public static let string = "0.3.0"
}
