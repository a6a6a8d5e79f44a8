import Configuration
import Foundation
import Testing

/// docs/operations.md's tables of settings say what the declarations say: one table per role,
/// in `SettingRole` order, each setting's row in its role's order, marked repeatable when it is,
/// with its default and the commands that take it. A setting added, moved or changed without
/// its row fails here.
struct SettingsTableTests {
    /// One row of a table: its role's heading and its first three cells.
    struct Row {
        let role: String
        let key: String
        let isRepeatable: Bool
        let defaultCell: String
        let usedBy: String
    }

    /// The rows of the tables of docs/operations.md's "Configuration" whose first cell is a key in backquotes.
    static func documentedRows() throws -> [Row] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/operations.md").path
        var role = ""
        var rows: [Row] = []
        let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        // The section "## Configuration", up to the next of its level.
        let section = lines.drop { $0 != "## Configuration" }.dropFirst().prefix { !$0.hasPrefix("## ") }
        for line in section {
            if line.hasPrefix("#### ") { role = String(line.dropFirst("#### ".count)) }
            let cells = line.components(separatedBy: " | ")
            guard line.hasPrefix("| `"), cells.count >= 4 else { continue }
            let key = cells[0].dropFirst("| `".count).prefix { $0 != "`" }
            rows.append(Row(
                role: role, key: String(key), isRepeatable: cells[0].hasSuffix("(repeatable)"), defaultCell: cells[1], usedBy: cells[2]))
        }
        return rows
    }

    @Test func everySettingHasItsRowInItsRolesTableInDeclarationOrder() throws {
        let documented = try Self.documentedRows().map { "\($0.role): \($0.key)\($0.isRepeatable ? " (repeatable)" : "")" }
        let declared = SettingRole.allCases.flatMap { role in
            role.keys.map { "\(role.title): \($0.rawValue)\($0.isRepeatable ? " (repeatable)" : "")" }
        }
        #expect(documented == declared)
    }

    @Test func eachRowGivesTheDeclaredDefaultAndCommands() throws {
        let rows = try Self.documentedRows()
        let defaults = Settings()
        for key in SettingKey.allCases {
            let row = try #require(rows.first { $0.key == key.rawValue }, "no row of \(key.rawValue)")
            let values = defaults.values(of: key)
            if row.defaultCell.hasPrefix("`") {
                let quoted = row.defaultCell.dropFirst().prefix { $0 != "`" }
                #expect(String(quoted) == values.joined(separator: ", "), "\(key.rawValue): the table says \(row.defaultCell), the default is \(values)")
            } else {
                // `node`'s default is the host's name, which no table can show.
                #expect(values.isEmpty || key == .node, "\(key.rawValue): the table says \(row.defaultCell), the default is \(values)")
            }
            let commands = SettingCommand.allCases.filter(key.commands.contains).map(\.rawValue).joined(separator: ", ")
            #expect(row.usedBy == commands, "\(key.rawValue): the table says used by \(row.usedBy), the declaration \(commands)")
        }
    }
}
