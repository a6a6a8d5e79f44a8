import JSON

/// `lyceum status` for a person at a terminal: the `mmi.status` answer (and its `partitions`
/// member) as aligned tables of services, journals, nodes and partitions with their owners
/// (and, for replicated partitions, how many each node leads, the epoch and each follower's role
/// and lag).
/// Values a peer chose are shown as sent; members that are missing show as `-`.
enum StatusTable {
    /// The tables of `status`, one blank line apart, ending with a newline.
    static func render(_ status: JSONObject) -> String {
        var sections: [String] = [summary(status)]
        let services = objects(status["services"]).map { service in
            let local = service["local"] == .bool(true)
            return [text(service["name"]), local ? "local" : text(service["workers"]), local ? "-" : text(service["idle_workers"]),
                    text(service["queued_requests"])]
        }
        sections.append(table(["SERVICE", "WORKERS", "IDLE", "QUEUED"], services, numeric: [1, 2, 3]))
        let journals = objects(status["journals"]).map { journal in
            [text(journal["service"]), text(journal["bytes"]), text(journal["last_sequence"]), text(journal["appends"]), text(journal["syncs"])]
        }
        if !journals.isEmpty {
            sections.append(table(["JOURNAL", "BYTES", "LAST SEQ", "APPENDS", "SYNCS"], journals, numeric: [1, 2, 3, 4]))
        }
        if case .object(let partitions)? = status["partitions"] {
            sections.append(contentsOf: render(partitions: partitions))
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    private static func summary(_ status: JSONObject) -> String {
        var line = "\(text(status["role"])) up \(uptime(status["uptime_seconds"]))"
        line += ", \(text(status["workers"])) workers, \(text(status["queued_requests"])) queued requests"
        return line
    }

    private static func render(partitions: JSONObject) -> [String] {
        let heading = "partitions: \(text(partitions["count"])), \(text(partitions["unowned"])) unowned, \(text(partitions["contested"])) contested"
        let replicated = objects(partitions["table"]).contains { $0["replicas"] != nil }
        // How many replicated partitions each node leads, so that an uneven share
        // (protocol/replication.md, *Balanced leaderships*) shows beside what it serves.
        var leaderships: [String: Int] = [:]
        for row in objects(partitions["table"]) {
            if case .string(let leader)? = row["leader"] { leaderships[leader, default: 0] += 1 }
        }
        let nodes = objects(partitions["nodes"]).map { node in
            let led = replicated ? ", \(leaderships[text(node["node"])] ?? 0) led" : ""
            return [text(node["node"] ?? node["service"]), node["error"].map { "error: \(text($0))" } ?? "\(text(node["held"])) held\(led)"]
        }
        let rows = objects(partitions["table"]).map { row in
            let owners = objects(row["owners"]).map { owner in
                "\(text(owner["node"])) (seq \(text(owner["last_seq"])), \(text(owner["state"])))"
            }
            let cells = [text(row["service"]), text(row["partition"]), text(row["state"]), owners.isEmpty ? "-" : owners.joined(separator: ", ")]
            return replicated ? cells + [text(row["epoch"]), followers(row)] : cells
        }
        let headers = ["SERVICE", "PARTITION", "STATE", "OWNERS"] + (replicated ? ["EPOCH", "FOLLOWERS"] : [])
        return [heading, table(["NODE", "PARTITIONS"], nodes, numeric: []), table(headers, rows, numeric: replicated ? [1, 4] : [1])]
    }

    /// A replicated partition's replicas other than its leader: `w2 lag 0 (0 B)` for a follower
    /// the leader reports, else its own role and last sequence (`w3 candidate, seq 120`).
    private static func followers(_ row: JSONObject) -> String {
        let leader = row["leader"]
        let others = objects(row["replicas"]).filter { $0["node"] != leader }.map { replica in
            if replica["lag_records"] != nil {
                return "\(text(replica["node"])) lag \(text(replica["lag_records"])) (\(bytes(replica["lag_bytes"])))"
            }
            return "\(text(replica["node"])) \(text(replica["role"])), seq \(text(replica["last_seq"]))"
        }
        return others.isEmpty ? "-" : others.joined(separator: ", ")
    }

    /// `512 B`, `3.4 KiB`, `12.0 MiB`.
    private static func bytes(_ value: JSONValue?) -> String {
        guard case .integer(let count)? = value else { return text(value) }
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var amount = Double(count) / 1024
        var unit = 0
        while amount >= 1024, unit < units.count - 1 { amount /= 1024; unit += 1 }
        return "\((amount * 10).rounded() / 10) \(units[unit])"
    }

    /// `rows` under `headers`, each column as wide as its widest cell; the `numeric` columns
    /// right-aligned. No trailing spaces.
    static func table(_ headers: [String], _ rows: [[String]], numeric: Set<Int>) -> String {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return numeric.contains(column) ? padding + cell : cell + (column == row.count - 1 ? "" : padding)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    private static func objects(_ value: JSONValue?) -> [JSONObject] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
    }

    private static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: text
        case .integer(let number)?: String(number)
        case .double(let number)?: String(number)
        case .bool(let flag)?: String(flag)
        case nil, .null?: "-"
        case let other?: String(decoding: other.serialized(), as: UTF8.self)
        }
    }

    /// `1d 02h 03m`, `2h 03m 04s`, `3m 04s` or `4s`.
    private static func uptime(_ value: JSONValue?) -> String {
        let seconds: Int
        switch value {
        case .double(let number)?: seconds = Int(number)
        case .integer(let number)?: seconds = number
        default: return "-"
        }
        let (days, hours, minutes, rest) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60)
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : String(number) }
        if days > 0 { return "\(days)d \(two(hours))h \(two(minutes))m" }
        if hours > 0 { return "\(hours)h \(two(minutes))m \(two(rest))s" }
        return minutes > 0 ? "\(minutes)m \(two(rest))s" : "\(rest)s"
    }
}
