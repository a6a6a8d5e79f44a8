"""Every operation of the contract through the blocking and the asyncio client, against a real
``lyceum serve``, and many requests in flight at once."""
from __future__ import annotations

import asyncio
import threading
import unittest

from lyceum_client import aio

from .support import Serve, ServeTestCase

# From the sample catalog: course "1" (Algebra) has 4 lessons and a 3-question quiz.
COURSE, LESSONS = "1", ["1", "2", "3", "4"]


class BlockingOperationsTests(ServeTestCase):
    def test_catalog(self) -> None:
        catalog = self.client.catalog
        page = catalog.list_courses(limit=2)
        self.assertEqual(len(page["courses"]), 2)
        self.assertIsNotNone(page["next_cursor"])
        rest = catalog.list_courses(cursor=page["next_cursor"])
        self.assertNotIn(page["courses"][0]["id"], [course["id"] for course in rest["courses"]])
        self.assertEqual([course["id"] for course in catalog.list_courses(category="Algebra")["courses"]], [COURSE])
        course = catalog.get_course(COURSE)
        self.assertEqual([lesson["id"] for lesson in course["lessons"]], LESSONS)
        lesson = catalog.get_lesson(COURSE, "2")
        self.assertEqual((lesson["position"], lesson["previous"], lesson["next"]), (2, "1", "3"))
        quiz = catalog.get_quiz(COURSE)
        self.assertEqual(len(quiz["questions"]), 3)
        self.assertNotIn("correct_index", quiz["questions"][0])
        self.assertIn({"name": "Algebra", "course_count": 1}, catalog.list_categories())
        hits = catalog.search("francais", limit=1)["hits"]
        self.assertEqual(hits[0]["course"]["id"], "cafe-francais-everyday-french")

    def test_books(self) -> None:
        books = self.client.books
        dune = books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5, "Spice.")
        emma = books.create("ada", "Emma", "Jane Austen", "Romance", 4)
        self.assertEqual((dune["version"], emma["review"]), (1, ""))
        self.assertEqual(books.get("ada", dune["id"]), dune)
        updated = books.update("ada", dune["id"], rating=4, expected_version=1)
        self.assertEqual((updated["rating"], updated["version"]), (4, 2))
        page = books.list("ada", sort="title", order="desc", limit=1)
        self.assertEqual([book["title"] for book in page["books"]], ["Emma"])
        self.assertEqual([book["title"] for book in books.list("ada", cursor=page["next_cursor"], sort="title",
                                                                order="desc")["books"]], ["Dune"])
        self.assertEqual([b["id"] for b in books.list("ada", genre="Romance", author="jane austen",
                                                      min_rating=4)["books"]], [emma["id"]])
        self.assertEqual(books.delete("ada", dune["id"], expected_version=2), dune["id"])
        self.assertEqual([book["id"] for book in books.list("ada")["books"]], [emma["id"]])

    def test_progress(self) -> None:
        progress = self.client.progress
        begun = progress.begin_course("ada", COURSE)
        self.assertEqual(begun["current_lesson"], "1")
        self.assertEqual(progress.mark_watched("ada", COURSE, "1")["watched_count"], 1)
        self.assertEqual(progress.mark_watched("ada", COURSE, "2")["percent"], 50)
        self.assertEqual(progress.mark_unwatched("ada", COURSE, "2")["watched_count"], 1)
        self.assertEqual(progress.open_lesson("ada", COURSE, "3")["current_lesson"], "3")
        progress.save_position("ada", COURSE, "3", 42.5)
        result = progress.submit_quiz("ada", COURSE, [0, 0, 1])
        self.assertEqual(result["total"], 3)
        self.assertEqual(result["progress"]["best_score"], {"score": result["score"], "total": 3})
        learner = progress.get("ada", COURSE)
        self.assertEqual((learner["started"], learner["watched"]), (True, ["1"]))
        self.assertEqual(learner["positions"], [{"lesson": "3", "seconds": 42.5}])
        self.assertEqual(learner["latest_attempt"]["answers"], [0, 0, 1])
        self.assertEqual([course["course"] for course in progress.list("ada")["courses"]], [COURSE])
        stats = progress.course_stats(COURSE)
        self.assertEqual((stats["learners_started"], stats["quiz_takers"]), (1, 1))
        self.assertFalse(progress.get("nobody", COURSE)["started"])

    def test_threads_share_the_client_with_requests_in_flight_together(self) -> None:
        results: list[str] = []

        def reader() -> None:
            for _ in range(20):
                results.append(self.client.catalog.get_course(COURSE)["id"])
        threads = [threading.Thread(target=reader) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual(results, [COURSE] * 160)


class AsyncOperationsTests(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.serve = Serve(self)

    async def asyncSetUp(self) -> None:
        # The test loop runs in debug mode, whose slow-callback warnings would only be noise here.
        asyncio.get_running_loop().set_debug(False)

    async def test_every_service_and_many_requests_in_flight(self) -> None:
        async with aio.Client(self.serve.endpoint, timeout=10) as client:
            book = await client.books.create("bob", "Beloved", "Toni Morrison", "Thriller", 5)
            self.assertEqual((await client.books.get("bob", book["id"]))["title"], "Beloved")
            self.assertEqual((await client.progress.mark_watched("bob", COURSE, "4"))["watched_count"], 1)
            self.assertEqual((await client.catalog.get_quiz(COURSE))["course"], COURSE)
            # 300 requests at once on one connection, each answered with its own reply.
            lessons = await asyncio.gather(*[client.catalog.get_lesson(COURSE, LESSONS[i % 4]) for i in range(300)])
            self.assertEqual([lesson["id"] for lesson in lessons], [LESSONS[i % 4] for i in range(300)])
            created = await asyncio.gather(*[client.books.create("bob", f"T{i}", "A", "Kids", 3) for i in range(50)])
            self.assertEqual(len({book["id"] for book in created}), 50)
            self.assertEqual(len((await client.books.list("bob", limit=100))["books"]), 51)


if __name__ == "__main__":
    unittest.main()
