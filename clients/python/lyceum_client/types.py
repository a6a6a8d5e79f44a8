"""The shapes of results and events, as TypedDicts named after protocol/schemas. Values are the
decoded JSON exactly as the server sent it (times stay RFC 3339 strings), so nothing is lost or
reinterpreted; absent optional values are ``None``."""
from __future__ import annotations

from typing import Literal, Optional, TypedDict

Genre = Literal["Fantasy", "Horror", "Kids", "Mystery", "Poetry", "Romance", "Thriller"]
BookSort = Literal["title", "author", "rating", "created"]
Order = Literal["asc", "desc"]


class Book(TypedDict):
    """A book of a learner's library (``common.json#/$defs/book``)."""
    id: str
    title: str
    author: str
    genre: Genre
    rating: int
    review: str
    version: int
    created_at: str
    updated_at: str


class BookPage(TypedDict):
    """One page of ``books list``; pass ``next_cursor`` back as ``cursor`` until it is ``None``."""
    books: list[Book]
    next_cursor: Optional[str]


class CourseSummary(TypedDict):
    """A course without its lessons (``common.json#/$defs/course_summary``)."""
    id: str
    title: str
    category: Optional[str]
    description: Optional[str]
    image: Optional[str]
    time: Optional[str]
    total_seconds: Optional[int]
    lesson_count: int
    question_count: int


class LessonSummary(TypedDict):
    """A lesson as a course lists it."""
    id: str
    title: str
    video: Optional[str]
    thumbnail: Optional[str]
    duration: Optional[str]
    duration_seconds: Optional[int]


class Course(CourseSummary):
    """``catalog get_course``: the summary plus the lessons."""
    lessons: list[LessonSummary]


class Lesson(LessonSummary):
    """``catalog get_lesson``: a lesson with its place in the course."""
    explanation: Optional[str]
    course: str
    position: int
    previous: Optional[str]
    next: Optional[str]


class Question(TypedDict):
    """A quiz question; the correct answer is never sent."""
    id: str
    content: str
    answers: list[str]


class Quiz(TypedDict):
    """``catalog get_quiz``."""
    course: str
    description: Optional[str]
    image: Optional[str]
    time: Optional[str]
    questions: list[Question]


class Category(TypedDict):
    """One entry of ``catalog list_categories``."""
    name: str
    course_count: int


class CoursePage(TypedDict):
    """One page of ``catalog list_courses``."""
    courses: list[CourseSummary]
    next_cursor: Optional[str]


class HitLesson(TypedDict):
    """A lesson whose title matched a search."""
    id: str
    title: str


class SearchHit(TypedDict):
    """One course found by ``catalog search``; only the order of ``score`` is meaningful."""
    course: CourseSummary
    score: int
    lessons: list[HitLesson]


class SearchPage(TypedDict):
    """One page of ``catalog search``."""
    hits: list[SearchHit]
    next_cursor: Optional[str]


class Score(TypedDict):
    """A quiz score."""
    score: int
    total: int


class ProgressSummary(TypedDict):
    """A learner's progress in one course, as every progress write replies
    (``common.json#/$defs/progress_summary``)."""
    course: str
    watched_count: int
    lesson_count: int
    percent: int
    current_lesson: Optional[str]
    completed: bool
    best_score: Optional[Score]
    updated_at: str


class Attempt(TypedDict):
    """A quiz attempt as ``progress get`` reports it."""
    score: int
    total: int
    wrong: list[str]
    answers: list[int]
    submitted_at: str


class Position(TypedDict):
    """A saved playback position."""
    lesson: str
    seconds: float


class LearnerProgress(TypedDict):
    """``progress get``: everything about one learner in one course."""
    learner: str
    course: str
    started: bool
    watched: list[str]
    watched_count: int
    lesson_count: int
    percent: int
    current_lesson: Optional[str]
    completed: bool
    positions: list[Position]
    best_attempt: Optional[Attempt]
    latest_attempt: Optional[Attempt]
    started_at: Optional[str]
    updated_at: Optional[str]


class QuizResult(TypedDict):
    """``progress submit_quiz``: this attempt's score and the progress after it."""
    score: int
    total: int
    wrong: list[str]
    progress: ProgressSummary


class ProgressPage(TypedDict):
    """One page of ``progress list``: a learner's courses, most recently updated first."""
    learner: str
    courses: list[ProgressSummary]
    next_cursor: Optional[str]


class CourseStats(TypedDict):
    """``progress course_stats``."""
    course: str
    learners_started: int
    learners_completed: int
    quiz_takers: int
    average_score_percent: Optional[float]


class ProgressEvent(TypedDict):
    """A progress event (``schemas/events.progress.json``)."""
    seq: int
    progress_seq: int
    source: str
    course_seq: int
    revision: int
    type: str
    learner: str
    course: str
    lesson: Optional[str]
    time: str
    progress: ProgressSummary
    completes_course: bool
    quiz: Optional[Score]


class BookEvent(TypedDict):
    """A book event (``schemas/events.book.json``); ``book`` is ``None`` for ``book_deleted``."""
    seq: int
    books_seq: int
    source: str
    revision: int
    type: str
    learner: str
    book_id: str
    book: Optional[Book]
    time: str


class SnapshotEntry(TypedDict):
    """The state of one learner in one course, as a snapshot page or an applied event gives it."""
    topic: str
    learner: str
    course: str
    revision: int
    progress: ProgressSummary
