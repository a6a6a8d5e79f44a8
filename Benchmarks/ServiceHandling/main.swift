// Per-request cost of the learning services without sockets, and journal replay speed.
// Run: swift run -c release service-handling [books-to-replay]
// Reference measured in the same run: Foundation's JSONSerialization on the same frames.
// Times are thread CPU time, so that other work on the machine does not distort them.
import Books
import Catalog
import Foundation
import JSON
import Journal
import LearningServices
import LearningServicesTestSupport

/// CPU time of this thread in nanoseconds: other processes on a shared machine do not inflate it.
func cpuNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func measure(_ label: String, iterations: Int, _ body: () -> Void) -> Double {
    for _ in 0..<min(iterations, 1_000) { body() }
    let start = cpuNanoseconds()
    for _ in 0..<iterations { body() }
    let nanoseconds = Double(cpuNanoseconds() - start) / Double(iterations)
    FileHandle.standardError.write(Data("\(label): \(String(format: "%.0f", nanoseconds)) ns/op\n".utf8))
    return nanoseconds
}

let replayCount = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
let log = InMemoryChangeLog()
let books = BooksService(log: log)
let catalog = CatalogService(store: CatalogStore(try Catalog.sample()))

let created = books.handle(Array(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5,"review":"Spice."}"#.utf8))
guard case .string(let id)? = try JSONParser().parse(created)["result"]?["book"]?["id"] else { fatalError("create failed") }
let getFrame = Array(#"{"op":"get","learner":"ada","id":"\#(id)"}"#.utf8)
let listFrame = Array(#"{"op":"list_courses","limit":20}"#.utf8)
let searchFrame = Array(#"{"op":"search","query":"statistics"}"#.utf8)
let reference = measure("reference: JSONSerialization parse of the books.get frame", iterations: 200_000) {
    _ = try! JSONSerialization.jsonObject(with: Data(getFrame))
}
let parse = measure("JSONParser parse of the books.get frame", iterations: 200_000) { _ = try! JSONParser().parse(getFrame) }
let get = measure("books.get (parse, lookup, reply)", iterations: 200_000) { _ = books.handle(getFrame) }
let list = measure("catalog.list_courses limit 20", iterations: 50_000) { _ = catalog.handle(listFrame) }
let search = measure("catalog.search", iterations: 50_000) { _ = catalog.handle(searchFrame) }
var sequence = 0
let create = measure("books.create (in-memory log)", iterations: 100_000) {
    sequence += 1
    _ = books.handle(Array(#"{"op":"create","learner":"l\#(sequence % 1000)","title":"T\#(sequence)","author":"A","genre":"Kids","rating":3}"#.utf8))
}

// Title-sorted lists (issue 14, finding 4): libraries as a journal may hold them, applied directly
// because the service refuses such titles on create. Reply size shows the byte budget of a page.
func library(_ count: Int, title: (Int) -> String, review: String = "") throws -> BooksService {
    var state = BooksState()
    for index in 0..<count {
        let book = Book(
            id: "00000000-0000-4000-8000-\(String(format: "%012d", index))", learner: "eve", title: title(index), author: "A",
            genre: .mystery, rating: 3, review: review, version: 1, createdAt: 1_767_603_600_000 + Int64(index),
            updatedAt: 1_767_603_600_000)
        try state.apply(.put(BookLibrary.collection, key: "eve/\(book.id)", value: book.journalValue()))
    }
    return BooksService(state: state, log: InMemoryChangeLog())
}
let accents = String(repeating: "\u{301}", count: 30_000)
let hostile = try library(61) { "e\(accents)\($0 % 7)" }
let ordinary = try library(1_000) { ["Émile \($0)", "dune \($0)", "Zorba \($0)", "Ångström \($0)", "Война \($0)"][$0 % 5] }
let bulky = try library(1_000, title: { "Title \($0)" }, review: String(repeating: "x", count: 4_000))
let titleFrame = Array(#"{"op":"list","learner":"eve","sort":"title","limit":100}"#.utf8)
let createdFrame = Array(#"{"op":"list","learner":"eve","limit":100}"#.utf8)
let hostileList = measure("books.list sort=title, 61 books with 60 KB one-character titles", iterations: 20) { _ = hostile.handle(titleFrame) }
let ordinaryList = measure("books.list sort=title limit 100 of 1,000 mixed-script titles", iterations: 200) { _ = ordinary.handle(titleFrame) }
let bulkyList = measure("books.list limit 100 of 1,000 books with 4,000-character reviews", iterations: 200) { _ = bulky.handle(createdFrame) }
FileHandle.standardError.write(Data("reply bytes: hostile \(hostile.handle(titleFrame).count), ordinary \(ordinary.handle(titleFrame).count), bulky \(bulky.handle(createdFrame).count)\n".utf8))

// Replay: journal payloads of `replayCount` books applied to a fresh state.
var payloads: [JournalChange] = []
payloads.reserveCapacity(replayCount)
for index in 0..<replayCount {
    let book = Book(
        id: "00000000-0000-4000-8000-\(String(format: "%012d", index))", learner: "learner-\(index % 10_000)", title: "Title \(index)",
        author: "Author \(index % 5_000)", genre: .mystery, rating: 1 + index % 5, review: "A review of book \(index).", version: 1,
        createdAt: 1_767_603_600_000, updatedAt: 1_767_603_600_000)
    payloads.append(.put(BookLibrary.collection, key: "\(book.learner)/\(book.id)", value: book.journalValue()))
}
let decodeStart = cpuNanoseconds()
var decoded = 0
for change in payloads where (try? Book(journalValue: change.value!)) != nil { decoded += 1 }
let decodeSeconds = Double(cpuNanoseconds() - decodeStart) / 1e9
FileHandle.standardError.write(Data("decoding \(decoded) book payloads alone: \(String(format: "%.2f", decodeSeconds)) s\n".utf8))
let replayStart = cpuNanoseconds()
var state = BooksState()
for change in payloads { try state.apply(change) }
let replaySeconds = Double(cpuNanoseconds() - replayStart) / 1e9
FileHandle.standardError.write(Data("replay of \(state.library.count) books: \(String(format: "%.2f", replaySeconds)) s\n".utf8))

print(String(format: "JSONParser vs JSONSerialization (parse of a request): %.1fx faster", reference / parse))
print(String(format: "books.get %.0f ns, books.create %.0f ns, catalog.list_courses %.0f ns, catalog.search %.0f ns (single thread)", get, create, list, search))
print(String(format: "replay: %.0f books/s", Double(replayCount) / replaySeconds))
print(String(format: "books.list by title: hostile %.0f ns, ordinary %.0f ns; list page of long reviews %.0f ns", hostileList, ordinaryList, bulkyList))
