"""Every operation of the contract, written once: what it sends (protocol/schemas/<service>.<op>.
request.json) and what it returns. The sync and the asyncio client expose the same service objects
(``client.books.create(...)``); only how a ``Call`` is carried differs, which the ``Mode`` type
parameter tells type checkers: ``Books[Sync]`` methods return results, ``Books[Async]`` ones return
awaitables of them.
"""
from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from typing import (Any, Awaitable, Callable, Generic, Mapping, Optional, ParamSpec, Sequence,
                    TypeVar, overload)

from .types import (Book, BookPage, BookSort, Category, Course, CoursePage, CourseStats, Genre,
                    LearnerProgress, Lesson, Order, ProgressPage, ProgressSummary, Quiz, QuizResult,
                    SearchPage)

T = TypeVar("T")
P = ParamSpec("P")
# Version 2 adds the codes `forbidden` and `unauthenticated`, version 3 `limit_exceeded`, version 4
# `storage_full`; a request saying an older version gets `bad_request` in their place
# (protocol/README.md).
CONTRACT_VERSION = 4


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request, ready to send: the service, the JSON body (with its ``request_id`` already
    chosen for a write, so every retry carries the same one) and how to turn the reply's
    ``result`` into what the method returns."""
    service: str
    body: Mapping[str, Any]
    decode: Callable[[Any], T]


def new_request_id() -> str:
    """A fresh idempotency key: a random UUID, within the contract's alphabet and length."""
    return str(uuid.uuid4())


def _body(op: str, parameters: Mapping[str, Any], *, write: bool = False,
          request_id: Optional[str] = None) -> dict[str, Any]:
    # Absent optional members are left out: the contract refuses null for most of them.
    body: dict[str, Any] = {"op": op, "v": CONTRACT_VERSION}
    body.update((name, value) for name, value in parameters.items() if value is not None)
    if write:
        body["request_id"] = request_id or new_request_id()
    return body


def _member(name: str) -> Callable[[Any], Any]:
    return lambda result: result[name]


def _whole(result: Any) -> Any:
    return result


class Sync:
    """Marks service objects whose methods block and return results."""


class Async:
    """Marks service objects whose methods return awaitables."""


M = TypeVar("M", Sync, Async)


class Service(Generic[M]):
    """A service's operations, bound to a client's way of carrying a ``Call``."""

    def __init__(self, invoke: Callable[[Call[Any]], Any]) -> None:
        self._invoke = invoke


class Operation(Generic[P, T]):
    """A method of a ``Component``: builds the ``Call`` from the arguments and hands it to the client."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build
        functools.update_wrapper(self, build)  # type: ignore[arg-type]

    @overload
    def __get__(self, service: None, owner: type) -> Operation[P, T]: ...
    @overload
    def __get__(self, service: Service[Sync], owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, service: Service[Async], owner: type) -> Callable[P, Awaitable[T]]: ...

    def __get__(self, service: Any, owner: type) -> Any:
        if service is None:
            return self
        build = self._build

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            return service._invoke(build(*args, **kwargs))
        return method


# --- catalog -------------------------------------------------------------------------------------

def _catalog_list_courses(*, category: Optional[str] = None, limit: Optional[int] = None,
                          cursor: Optional[str] = None) -> Call[CoursePage]:
    """One page of courses in catalog order, optionally of one ``category``."""
    return Call("catalog", _body("list_courses", dict(category=category, limit=limit, cursor=cursor)), _whole)


def _catalog_get_course(course: str) -> Call[Course]:
    """A course with its lessons; ``NotFound`` when it does not exist."""
    return Call("catalog", _body("get_course", dict(course=course)), _member("course"))


def _catalog_get_lesson(course: str, lesson: str) -> Call[Lesson]:
    """A lesson with its explanation and its neighbours' ids."""
    return Call("catalog", _body("get_lesson", dict(course=course, lesson=lesson)), _member("lesson"))


def _catalog_get_quiz(course: str) -> Call[Quiz]:
    """A course's quiz without the correct answers; ``NotFound`` when it has none."""
    return Call("catalog", _body("get_quiz", dict(course=course)), _member("quiz"))


def _catalog_list_categories() -> Call[list[Category]]:
    """Every category with its number of courses, by name."""
    return Call("catalog", _body("list_categories", {}), _member("categories"))


def _catalog_search(query: str, *, limit: Optional[int] = None,
                    cursor: Optional[str] = None) -> Call[SearchPage]:
    """Courses matching every word of ``query``, best first."""
    return Call("catalog", _body("search", dict(query=query, limit=limit, cursor=cursor)), _whole)


class Catalog(Service[M]):
    """The read-only ``catalog`` service."""
    list_courses = Operation(_catalog_list_courses)
    get_course = Operation(_catalog_get_course)
    get_lesson = Operation(_catalog_get_lesson)
    get_quiz = Operation(_catalog_get_quiz)
    list_categories = Operation(_catalog_list_categories)
    search = Operation(_catalog_search)


# --- books ---------------------------------------------------------------------------------------

def _books_create(learner: str, title: str, author: str, genre: Genre, rating: int,
                  review: Optional[str] = None, *, request_id: Optional[str] = None) -> Call[Book]:
    """Adds a book to ``learner``'s library; applied once however often it is retried."""
    parameters = dict(learner=learner, title=title, author=author, genre=genre, rating=rating, review=review)
    return Call("books", _body("create", parameters, write=True, request_id=request_id), _member("book"))


def _books_get(learner: str, id: str) -> Call[Book]:
    """One book; ``NotFound`` when the learner has no book with this id."""
    return Call("books", _body("get", dict(learner=learner, id=id)), _member("book"))


def _books_update(learner: str, id: str, *, title: Optional[str] = None, author: Optional[str] = None,
                  genre: Optional[Genre] = None, rating: Optional[int] = None, review: Optional[str] = None,
                  expected_version: Optional[int] = None, request_id: Optional[str] = None) -> Call[Book]:
    """Changes the given members of a book; ``Conflict`` when ``expected_version`` is stale."""
    parameters = dict(learner=learner, id=id, expected_version=expected_version, title=title, author=author,
                      genre=genre, rating=rating, review=review)
    return Call("books", _body("update", parameters, write=True, request_id=request_id), _member("book"))


def _books_delete(learner: str, id: str, *, expected_version: Optional[int] = None,
                  request_id: Optional[str] = None) -> Call[str]:
    """Removes a book; returns its id."""
    parameters = dict(learner=learner, id=id, expected_version=expected_version)
    return Call("books", _body("delete", parameters, write=True, request_id=request_id), _member("deleted"))


def _books_list(learner: str, *, sort: Optional[BookSort] = None, order: Optional[Order] = None,
                genre: Optional[Genre] = None, author: Optional[str] = None, min_rating: Optional[int] = None,
                limit: Optional[int] = None, cursor: Optional[str] = None) -> Call[BookPage]:
    """One page of a learner's library; page on with ``next_cursor`` and the same filters."""
    parameters = dict(learner=learner, sort=sort, order=order, genre=genre, author=author,
                      min_rating=min_rating, limit=limit, cursor=cursor)
    return Call("books", _body("list", parameters), _whole)


class Books(Service[M]):
    """The ``books`` service: each learner's own library."""
    create = Operation(_books_create)
    get = Operation(_books_get)
    update = Operation(_books_update)
    delete = Operation(_books_delete)
    list = Operation(_books_list)


# --- progress ------------------------------------------------------------------------------------

def _progress_write(op: str, request_id: Optional[str], **parameters: Any) -> Call[ProgressSummary]:
    return Call("progress", _body(op, parameters, write=True, request_id=request_id), _member("progress"))


def _progress_mark_watched(learner: str, course: str, lesson: str, *,
                           request_id: Optional[str] = None) -> Call[ProgressSummary]:
    """Marks a lesson watched; watching a watched lesson changes nothing."""
    return _progress_write("mark_watched", request_id, learner=learner, course=course, lesson=lesson)


def _progress_mark_unwatched(learner: str, course: str, lesson: str, *,
                             request_id: Optional[str] = None) -> Call[ProgressSummary]:
    """Marks a lesson not watched."""
    return _progress_write("mark_unwatched", request_id, learner=learner, course=course, lesson=lesson)


def _progress_save_position(learner: str, course: str, lesson: str, position_seconds: float, *,
                            request_id: Optional[str] = None) -> Call[ProgressSummary]:
    """Saves the playback position in a lesson (0–86,400 s)."""
    return _progress_write("save_position", request_id, learner=learner, course=course, lesson=lesson,
                           position_seconds=position_seconds)


def _progress_begin_course(learner: str, course: str, *,
                           request_id: Optional[str] = None) -> Call[ProgressSummary]:
    """Starts a course; its first lesson becomes current unless one is."""
    return _progress_write("begin_course", request_id, learner=learner, course=course)


def _progress_open_lesson(learner: str, course: str, lesson: str, *,
                          request_id: Optional[str] = None) -> Call[ProgressSummary]:
    """Makes a lesson the current one."""
    return _progress_write("open_lesson", request_id, learner=learner, course=course, lesson=lesson)


def _progress_submit_quiz(learner: str, course: str, answers: Sequence[int], *,
                          request_id: Optional[str] = None) -> Call[QuizResult]:
    """Submits one answer index per question, in quiz order; the server scores it."""
    body = _body("submit_quiz", dict(learner=learner, course=course, answers=list(answers)),
                 write=True, request_id=request_id)
    return Call("progress", body, _whole)


def _progress_get(learner: str, course: str) -> Call[LearnerProgress]:
    """Everything about a learner in a course; ``started`` is false for one who never began."""
    return Call("progress", _body("get", dict(learner=learner, course=course)), _member("progress"))


def _progress_course_stats(course: str) -> Call[CourseStats]:
    """How many learners started and completed a course, and their average best quiz score."""
    return Call("progress", _body("course_stats", dict(course=course)), _whole)


def _progress_list(learner: str, *, cursor: Optional[str] = None) -> Call[ProgressPage]:
    """One page of a learner's courses, most recently updated first."""
    return Call("progress", _body("list", dict(learner=learner, cursor=cursor)), _whole)


class Progress(Service[M]):
    """The ``progress`` service: learners' progress per course."""
    mark_watched = Operation(_progress_mark_watched)
    mark_unwatched = Operation(_progress_mark_unwatched)
    save_position = Operation(_progress_save_position)
    begin_course = Operation(_progress_begin_course)
    open_lesson = Operation(_progress_open_lesson)
    submit_quiz = Operation(_progress_submit_quiz)
    get = Operation(_progress_get)
    course_stats = Operation(_progress_course_stats)
    list = Operation(_progress_list)


def raw_call(service: str, body: Mapping[str, Any]) -> Call[Any]:
    """A request sent exactly as given (no ``v``, no ``request_id`` added), returning ``result``."""
    return Call(service, dict(body), _whole)


__all__ = ["Call", "Catalog", "Books", "Progress", "Service", "Operation", "Sync", "Async",
           "new_request_id", "raw_call"]
