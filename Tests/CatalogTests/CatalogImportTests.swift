import Catalog
import Foundation
import Testing

@Suite struct CatalogImportTests {
    func parse(_ text: String, file: String = "test.json") throws -> Catalog {
        try Catalog.parse(Array(text.utf8), file: file)
    }

    func loadError(_ text: String) -> CatalogLoadError? {
        do throws(CatalogLoadError) {
            _ = try Catalog.parse(Array(text.utf8), file: "broken.json")
            return nil
        } catch {
            return error
        }
    }

    @Test func importsTheCourseAppFormatDerivingStableIDs() throws {
        let catalog = try parse(#"""
            [{"course_name": "Café Français!", "course_thumbnail": "t.jpg", "extra": 1, "course_videos": [
              {"video_title": "Bonjour", "video_thumbnail": "v.jpg", "video_link": "https://v/1.mp4"},
              {"video_title": "Bonjour", "video_thumbnail": "v.jpg", "video_link": "https://v/2.mp4"}]},
             {"course_name": "Café français", "course_thumbnail": "t.jpg", "course_videos": []}]
            """#)
        #expect(catalog.courses.map(\.id) == ["cafe-francais", "cafe-francais-2"])
        #expect(catalog.courses[0].lessons.map(\.id) == ["bonjour", "bonjour-2"])
        #expect(catalog.courses[0].lessons[1].video == "https://v/2.mp4")
        #expect(catalog.courses[0].quiz == nil && catalog.courses[0].category == nil)
    }

    @Test func importsTheModuleAppFormat() throws {
        let catalog = try parse(#"""
            [{"id": 7, "category": "Algebra", "content": {"image": "a.png", "time": "3 Hours", "description": "d",
              "lessons": [{"id": 1, "title": "Variables", "video": "v.mp4", "duration": "12:30", "explanation": "e"},
                          {"id": 2, "title": "Equations", "video": "v2.mp4", "duration": "1:00:00", "explanation": "e"}]},
              "test": {"image": "t.png", "time": "10 Minutes", "description": "q",
              "questions": [{"id": 1, "content": "2+2?", "correctIndex": 1, "answers": ["3", "4"]}]}}]
            """#)
        let course = try #require(catalog.course("7"))
        #expect(course.title == "Algebra" && course.category == "Algebra" && course.time == "3 Hours")
        #expect(course.lessons.map(\.id) == ["1", "2"])
        #expect(course.totalSeconds == 750 + 3600)
        #expect(course.quiz?.questions.first?.correctIndex == 1)
        #expect(catalog.categories.map(\.name) == ["Algebra"] && catalog.categories.map(\.courseCount) == [1])
    }

    @Test(arguments: [
        ("[{\"course_name\": \"A\", \"course_videos\": [{\"video_title\": \"x\"}]}]", "$[0].course_videos[0].video_link", "is required"),
        ("[{\"course_name\": 3, \"course_videos\": []}]", "$[0].course_name", "expected a string, found number"),
        ("[{\"id\": 1, \"category\": \"C\", \"content\": {\"lessons\": [{\"id\": 1, \"title\": \"L\"}, {\"id\": 1, \"title\": \"M\"}]}}]",
         "$[0].content.lessons[1].id", "repeats lesson id 1"),
        ("[{\"id\": 1, \"category\": \"C\", \"content\": {\"lessons\": []}, \"test\": {\"questions\": [{\"id\": 1, \"content\": \"Q\", \"correctIndex\": 2, \"answers\": [\"a\", \"b\"]}]}}]",
         "$[0].test.questions[0].correctIndex", "must be between 0 and 1"),
        ("[{\"title\": \"x\"}]", "$[0]", "is neither a course app course (course_name) nor a module app module (content, test)"),
        ("{\"format\": \"lyceum-catalog\", \"version\": 2, \"courses\": []}", "$.version", "must be 1, the version this server reads"),
        ("{\"format\": \"lyceum-catalog\", \"version\": 1, \"courses\": [{\"id\": \"a b\", \"title\": \"T\", \"lessons\": []}]}",
         "$.courses[0].id", "must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit"),
        ("{\"format\": \"lyceum-catalog\", \"version\": 1, \"courses\": [{\"id\": \"a\", \"title\": \"T\", \"lessons\": [], \"colour\": 1}]}",
         "$.courses[0].colour", "is not a known field"),
        ("42", "$", "expected a catalog array or object, found number"),
    ])
    func rejectsMalformedFilesNamingFileAndPath(text: String, path: String, message: String) {
        #expect(loadError(text) == CatalogLoadError(file: "broken.json", path: path, message: message))
    }

    @Test func rejectsFilesThatAreNotJSONWithTheirOffset() {
        #expect(loadError("[{\"course_name\": }]") == CatalogLoadError(
            file: "broken.json", path: "$", offset: 17, message: "not valid JSON: unexpected byte"))
    }

    @Test func theSampleCatalogHasEveryFormat() throws {
        let catalog = try Catalog.sample()
        #expect(catalog.courses.count == 9)
        #expect(catalog.course("swiftui-essentials")?.lessons.count == 4)
        #expect(catalog.course("1")?.quiz?.questions.count == 3)
        #expect(catalog.course("intro-to-philosophy")?.quiz?.questions.count == 3)
    }

    @Test func readsDurationTexts() {
        #expect(DurationText.seconds("12:30") == 750)
        #expect(DurationText.seconds("1:02:03") == 3723)
        #expect(DurationText.seconds("3 Hours") == 10_800)
        #expect(DurationText.seconds("1h 20m") == 4_800)
        #expect(DurationText.seconds("15 min") == 900)
        #expect(DurationText.seconds("90") == 5_400)
        #expect(DurationText.seconds("soon") == nil)
        #expect(DurationText.seconds("1:xx") == nil)
    }
}

@Suite struct CatalogStoreTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Removes the test's directory; a failure to clean up is reported, not hidden.
    func removeDirectory() {
        do { try FileManager.default.removeItem(at: directory) } catch { Issue.record(error) }
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func aBrokenReloadKeepsTheOldCatalogServing() throws {
        defer { removeDirectory() }
        let good = try write("a.json", #"[{"course_name": "One", "course_videos": []}]"#)
        let store = CatalogStore(try Catalog.load(paths: [good]))
        let broken = try write("b.json", #"[{"course_name": "Two", "course_videos": [{"video_title": 1}]}]"#)
        #expect(throws: CatalogLoadError(file: broken, path: "$[0].course_videos[0].video_title", message: "expected a string, found number")) {
            try store.reload(from: [broken])
        }
        #expect(store.catalog.courses.map(\.id) == ["one"])
        let missing = directory.appendingPathComponent("none.json").path
        #expect(throws: CatalogLoadError(file: missing, path: "$", message: "does not exist")) { try store.reload(from: [missing]) }

        let second = try write("c.json", #"[{"course_name": "Three", "course_videos": []}]"#)
        try store.reload(from: [good, second])
        #expect(store.catalog.courses.map(\.id) == ["one", "three"])
        #expect(throws: CatalogLoadError.self) { try store.reload(from: [good, good]) }
        #expect(store.catalog.courses.count == 2)
    }

    @Test func loadsEveryJSONFileOfADirectoryInNameOrder() throws {
        defer { removeDirectory() }
        _ = try write("2.json", #"[{"course_name": "Later", "course_videos": []}]"#)
        _ = try write("1.json", #"[{"course_name": "Earlier", "course_videos": []}]"#)
        _ = try write("notes.txt", "not a catalog")
        #expect(try Catalog.load(paths: [directory.path]).courses.map(\.id) == ["earlier", "later"])
    }
}

@Suite struct CatalogQueryTests {
    let catalog: Catalog

    init() throws { catalog = try Catalog.sample() }

    @Test func pagesThroughEveryCourseWithOpaqueCursors() throws {
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try catalog.page(category: nil, limit: 4, cursor: cursor)
            seen += page.courses.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == catalog.courses.map(\.id))
        let geometry = try catalog.page(category: "Geometry", limit: 10, cursor: nil)
        #expect(geometry.courses.map(\.id) == ["2"] && geometry.nextCursor == nil)
        let first = try catalog.page(category: nil, limit: 1, cursor: nil)
        #expect(throws: InvalidCursor.self) { try catalog.page(category: "Arts", limit: 1, cursor: first.nextCursor) }
        #expect(throws: InvalidCursor.self) { try catalog.page(category: nil, limit: 1, cursor: "not hex") }
    }

    @Test func searchIgnoresCaseAndDiacriticsAndRanksTitlesFirst() {
        #expect(catalog.search("CAFE francais", limit: 5).map(\.course.id) == ["cafe-francais-everyday-french"])
        #expect(catalog.search("descartes", limit: 5).first?.lessons.map(\.id) == ["descartes"])
        let statistics = catalog.search("statistics", limit: 5).map(\.course.id)
        #expect(statistics == ["3", "python-for-data"])
        #expect(catalog.search("  ", limit: 5).isEmpty)
        #expect(catalog.search("zzzz", limit: 5).isEmpty)
    }
}
