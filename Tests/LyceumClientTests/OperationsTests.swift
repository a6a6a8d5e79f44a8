import LyceumClient
import LyceumTestSupport
import Testing

/// Every operation of the three services once, through the client, against a real serve.
@Suite(.serialized, .offTheCooperativePool)
struct OperationsTests {
    @Test func everyBooksOperation() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let dune = try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5)
            #expect(dune.version == 1 && dune.review == "" && dune.genre == .fantasy)
            let emma = try await lyceum.books.create(learner: "ada", title: "Emma", author: "Jane Austen", genre: .romance, rating: 4, review: "Witty.")
            #expect(try await lyceum.books.get(learner: "ada", id: dune.id) == dune)
            let updated = try await lyceum.books.update(learner: "ada", id: dune.id, expectedVersion: 1, rating: 4, review: "Spice.")
            #expect(updated.version == 2 && updated.rating == 4 && updated.review == "Spice." && updated.title == "Dune")

            let first = try await lyceum.books.list(learner: "ada", sort: .title, order: .descending, limit: 1)
            #expect(first.books.map(\.title) == ["Emma"])
            let cursor = try #require(first.nextCursor)
            let second = try await lyceum.books.list(learner: "ada", sort: .title, order: .descending, limit: 1, cursor: cursor)
            #expect(second.books == [updated] && second.nextCursor == nil)
            let filtered = try await lyceum.books.list(learner: "ada", genre: .romance, author: "jane austen", minRating: 4)
            #expect(filtered.books == [emma])

            #expect(try await lyceum.books.delete(learner: "ada", id: dune.id, expectedVersion: 2) == dune.id)
            #expect(try await lyceum.books.list(learner: "ada").books == [emma])
        }
    }

    @Test func everyCatalogOperation() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let page = try await lyceum.catalog.listCourses(limit: 2)
            #expect(page.courses.count == 2)
            let rest = try await lyceum.catalog.listCourses(cursor: try #require(page.nextCursor))
            #expect(!rest.courses.isEmpty && Set(rest.courses.map(\.id)).isDisjoint(with: page.courses.map(\.id)))
            #expect(try await lyceum.catalog.listCourses(category: "Algebra").courses.map(\.id) == ["1"])

            let course = try await lyceum.catalog.getCourse("1")
            #expect(course.category == "Algebra" && course.lessons.count == course.lessonCount && course.questionCount == 3)
            let lesson = try await lyceum.catalog.getLesson(course: "1", lesson: "2")
            #expect(lesson.position == 2 && lesson.previous == "1" && lesson.course == "1")
            let quiz = try await lyceum.catalog.getQuiz(course: "1")
            #expect(quiz.questions.count == 3 && quiz.questions.allSatisfy { $0.answers.count >= 2 })

            let hits = try await lyceum.catalog.search("SWIFTUI")
            #expect(hits.hits.first?.course.id == "swiftui-essentials")
            let categories = try await lyceum.catalog.listCategories()
            #expect(categories.contains { $0.name == "Algebra" && $0.courseCount == 1 })
        }
    }

    @Test func everyProgressOperation() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let begun = try await lyceum.progress.beginCourse(learner: "bo", course: "1")
            #expect(begun.currentLesson == "1" && begun.watchedCount == 0)
            #expect(try await lyceum.progress.openLesson(learner: "bo", course: "1", lesson: "2").currentLesson == "2")
            #expect(try await lyceum.progress.markWatched(learner: "bo", course: "1", lesson: "1").watchedCount == 1)
            #expect(try await lyceum.progress.markWatched(learner: "bo", course: "1", lesson: "2").watchedCount == 2)
            #expect(try await lyceum.progress.markUnwatched(learner: "bo", course: "1", lesson: "2").watchedCount == 1)
            _ = try await lyceum.progress.savePosition(learner: "bo", course: "1", lesson: "2", seconds: 12.5)
            let submitted = try await lyceum.progress.submitQuiz(learner: "bo", course: "1", answers: [0, 0, 0])
            #expect(submitted.total == 3 && submitted.progress.bestScore?.total == 3)

            let state = try await lyceum.progress.get(learner: "bo", course: "1")
            #expect(state.started && state.watched == ["1"] && state.positions.first?.seconds == 12.5)
            #expect(state.latestAttempt?.answers == [0, 0, 0])
            #expect(try await lyceum.progress.get(learner: "nobody", course: "1").started == false)

            _ = try await lyceum.progress.beginCourse(learner: "bo", course: "2")
            let list = try await lyceum.progress.list(learner: "bo")
            #expect(list.learner == "bo" && list.courses.map(\.course) == ["2", "1"] && list.nextCursor == nil)
            let stats = try await lyceum.progress.courseStats(course: "1")
            #expect(stats.learnersStarted == 1 && stats.quizTakers == 1 && stats.averageScorePercent != nil)
        }
    }

    @Test("many requests in flight on one connection, from many tasks")
    func concurrentCalls() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let titles = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<300 {
                    group.addTask {
                        try await lyceum.books.create(learner: "many", title: "Book \(index)", author: "A", genre: .kids, rating: 3).title
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(titles.count == 300)
            var listed = 0
            var cursor: String?
            repeat {
                let page = try await lyceum.books.list(learner: "many", limit: 100, cursor: cursor)
                listed += page.books.count
                cursor = page.nextCursor
            } while cursor != nil
            #expect(listed == 300)
        }
    }
}
