/// Where the agent exports its state for other tools (`[export]`); nothing is
/// exported unless a key here says where.
package struct ExportSettings: Sendable, Equatable {
    /// A Prometheus textfile (node_exporter's textfile collector reads `*.prom` files
    /// of its directory), rewritten on every change of the state; nil: none.
    package var prometheusTextfilePath: String?

    package init(prometheusTextfilePath: String? = nil) {
        self.prometheusTextfilePath = prometheusTextfilePath
    }
}
