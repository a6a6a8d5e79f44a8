/// The results so far, in the order they were measured, each under the scenario it belongs to;
/// the synchronous client against the C broker is `cSync`.
struct Results {
    /// The key of the synchronous client's run against the C broker, which belongs to `c-tcp`.
    static let cSync = "c-sync"
    private(set) var all: [(key: String, measurement: Measurement)] = []

    mutating func add(_ key: String, _ measurement: Measurement) { all.append((key, measurement)) }
    subscript(key: String) -> Measurement? { all.first { $0.key == key }?.measurement }
}

/// Each Lyceum broker scenario beside the C reference whose workers use the same transport.
let cCounterparts: [(lyceum: String, c: String)] = [
    (Settings.Scenario.sync.rawValue, Results.cSync),
    (Settings.Scenario.tcp.rawValue, Settings.Scenario.cTCP.rawValue),
    (Settings.Scenario.poolTCP.rawValue, Settings.Scenario.cTCP.rawValue),
    (Settings.Scenario.inproc.rawValue, Settings.Scenario.cInproc.rawValue),
    (Settings.Scenario.poolInproc.rawValue, Settings.Scenario.cInproc.rawValue),
    (Settings.Scenario.local.rawValue, Settings.Scenario.cInproc.rawValue),
]
