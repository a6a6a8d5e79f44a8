/// The byte budget of one page of a list reply: the serialized items of a page take at most
/// `maxBytes`, so that a reply's size is bounded by bytes as well as by its `limit`. A single item
/// larger than the budget is sent alone (the field limits bound it), so every page makes progress.
public struct ReplyBudget: Sendable, Equatable {
    /// Bytes of serialized items one page may hold.
    public let maxBytes: Int

    /// The default budget: 256 KiB of items per page.
    public static let standard = ReplyBudget(maxBytes: 256 * 1024)

    /// A budget of `maxBytes` bytes of items per page.
    public init(maxBytes: Int) { self.maxBytes = maxBytes }

    /// Appends `items` as comma-separated JSON, each written by `write`, until the next one would
    /// take the page past the budget; returns how many were written (at least one when `items`
    /// is not empty). An item that does not fit is serialized once and removed again, so a page
    /// costs at most one item more than it sends.
    func writeItems<Items: Sequence>(
        _ items: Items, to output: inout [UInt8], _ write: (Items.Element, inout [UInt8]) -> Void
    ) -> Int {
        let start = output.count
        var written = 0
        for item in items {
            let before = output.count
            if written > 0 { output.append(UInt8(ascii: ",")) }
            write(item, &output)
            if written > 0, output.count - start > maxBytes {
                output.removeSubrange(before...)
                break
            }
            written += 1
        }
        return written
    }
}
