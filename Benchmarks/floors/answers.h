/* answers.h: what the floors (Benchmarks/floors/) answer to the requests `lyceum bench` sends, shared by
   floor_server.c and the workers of Benchmarks/MajordomoEcho/mdp_reference.c. Included once per
   program (its functions are static); no libzmq here, only bytes in and bytes out.

   The answers are the least a reply that `lyceum bench` accepts needs (`{"ok":true,` first, and for
   setup the members it reads: a created book's `book.id`, a course list's `courses` and
   `next_cursor`, a course's `lessons`), about the size of Lyceum's:
   - catalog `get_course`: the reply Lyceum's catalog gave for that course, byte for byte, from a
     file of `ID<TAB>REPLY` lines (the one Benchmarks/suite.sh writes for the NATS responder);
     `list_courses`: the line whose ID is `list_courses`;
   - books `create` and `update`: the request's members as the book, with an id and its times; `get`:
     a book of the usual size under the requested id; progress `mark_watched`, `mark_unwatched`: the
     request's members and a summary. These are writes (`answer_writes`): the caller appends a
     record of them to its journal before it replies;
   - anything else: `{"ok":true,"result":{}}`. */
#ifndef FLOORS_ANSWERS_H
#define FLOORS_ANSWERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reply or a record is at most this long; a request whose answer would be longer gets the
   generic answer. */
#define ANSWER_MAX 65536

struct course_reply {
    char *id, *reply;
    size_t id_size, reply_size;
};

static struct course_reply *answer_courses;
static size_t answer_course_count;

/* Reads `ID<TAB>REPLY` lines from `path`; exits with a message on stderr when it cannot. */
static void answers_load(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) { perror(path); exit(1); }
    char *line = NULL;
    size_t capacity = 0;
    ssize_t size;
    while ((size = getline(&line, &capacity, file)) > 0) {
        if (line[size - 1] == '\n') line[--size] = 0;
        char *tab = memchr(line, '\t', (size_t)size);
        if (!tab) continue;
        answer_courses = realloc(answer_courses, (answer_course_count + 1) * sizeof *answer_courses);
        if (!answer_courses) { perror("realloc"); exit(1); }
        struct course_reply *course = &answer_courses[answer_course_count++];
        course->id_size = (size_t)(tab - line);
        course->id = strndup(line, course->id_size);
        course->reply_size = (size_t)(line + size - tab - 1);
        course->reply = strndup(tab + 1, course->reply_size);
        if (!course->id || !course->reply) { perror("strndup"); exit(1); }
    }
    free(line);
    fclose(file);
}

/* The string value of member `name` (`"name":"`) in `body`, without its quotes; false when absent. */
static bool answer_member(const char *body, size_t size, const char *name, const char **value, size_t *value_size) {
    char key[64];
    int key_size = snprintf(key, sizeof key, "\"%s\":\"", name);
    const char *found = memmem(body, size, key, (size_t)key_size);
    if (!found) return false;
    *value = found + key_size;
    const char *end = memchr(*value, '"', (size_t)(body + size - *value));
    if (!end) return false;
    *value_size = (size_t)(end - *value);
    return true;
}

static bool answer_is(const char *value, size_t size, const char *expected) {
    return size == strlen(expected) && memcmp(value, expected, size) == 0;
}

/* Whether the request is one that Lyceum journals (a record before the reply). */
static bool answer_writes(const char *body, size_t size) {
    const char *op;
    size_t op_size;
    if (!answer_member(body, size, "op", &op, &op_size)) return false;
    return answer_is(op, op_size, "create") || answer_is(op, op_size, "update")
        || answer_is(op, op_size, "mark_watched") || answer_is(op, op_size, "mark_unwatched");
}

/* The request's members, `body` without its braces ("" when it is not an object). */
static void answer_inner(const char *body, size_t size, const char **inner, size_t *inner_size) {
    *inner = "";
    *inner_size = 0;
    if (size >= 2 && body[0] == '{' && body[size - 1] == '}') {
        *inner = body + 1;
        *inner_size = size - 2;
    }
}

#define ANSWER_TIME "\"2026-12-07T22:00:00.000Z\""

/* Writes the reply to `body` of `service` into `out` (ANSWER_MAX bytes) and returns its size;
   `sequence` numbers the book a create makes. */
static size_t answer(const char *service, size_t service_size, const char *body, size_t size, uint64_t sequence, char *out) {
    const char *op = "", *inner, *value;
    size_t op_size = 0, inner_size, value_size;
    answer_member(body, size, "op", &op, &op_size);
    answer_inner(body, size, &inner, &inner_size);
    int written = -1;
    if (answer_is(service, service_size, "catalog")) {
        const char *key = op;
        size_t key_size = op_size;
        if (answer_is(op, op_size, "get_course") && answer_member(body, size, "course", &value, &value_size)) {
            key = value;
            key_size = value_size;
        }
        for (size_t index = 0; index < answer_course_count; index++) {
            struct course_reply *course = &answer_courses[index];
            if (course->id_size == key_size && memcmp(course->id, key, key_size) == 0 && course->reply_size <= ANSWER_MAX) {
                memcpy(out, course->reply, course->reply_size);
                return course->reply_size;
            }
        }
    } else if (answer_is(service, service_size, "books") && (answer_is(op, op_size, "create") || answer_is(op, op_size, "update"))) {
        written = snprintf(out, ANSWER_MAX,
                           "{\"ok\":true,\"result\":{\"book\":{\"id\":\"b%016llx\",%.*s,\"created_at\":" ANSWER_TIME
                           ",\"updated_at\":" ANSWER_TIME ",\"version\":1}}}",
                           (unsigned long long)sequence, (int)inner_size, inner);
    } else if (answer_is(service, service_size, "books") && answer_is(op, op_size, "get")
               && answer_member(body, size, "id", &value, &value_size)) {
        written = snprintf(out, ANSWER_MAX,
                           "{\"ok\":true,\"result\":{\"book\":{\"id\":\"%.*s\",\"learner\":\"bench-1-17\",\"title\":\"The Silent River 1234\","
                           "\"author\":\"Grace Hopper\",\"genre\":\"Mystery\",\"rating\":4,\"review\":\"A glass read; 321 pages of ember.\","
                           "\"created_at\":" ANSWER_TIME ",\"updated_at\":" ANSWER_TIME ",\"version\":1}}}",
                           (int)value_size, value);
    } else if (answer_is(service, service_size, "progress") && answer_writes(body, size)) {
        written = snprintf(out, ANSWER_MAX,
                           "{\"ok\":true,\"result\":{\"progress\":{%.*s,\"watched\":1,\"lesson_count\":8,\"percent\":12.5,"
                           "\"completed\":false,\"updated_at\":" ANSWER_TIME "}}}",
                           (int)inner_size, inner);
    }
    if (written < 0 || written >= ANSWER_MAX) written = snprintf(out, ANSWER_MAX, "{\"ok\":true,\"result\":{}}");
    return (size_t)written;
}

#endif
