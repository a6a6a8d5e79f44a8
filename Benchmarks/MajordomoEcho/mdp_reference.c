/* mdp_reference: a Majordomo (7/MDP, https://rfc.zeromq.org/spec/7/) broker with echo workers,
   written for this repository from the RFC, directly against libzmq, so that mdp-bench can measure
   Lyceum's broker against a C broker and C workers in the same run.

   Usage: mdp_reference tcp|inproc WORKERS [CATALOG]
     Prints the broker's TCP endpoint (where clients connect) as one line on stdout, then serves
     until stdin closes or SIGTERM/SIGINT arrives, and exits 0. A failing libzmq call is reported
     on stderr with the call's name, and the program exits 1.

   Broker: one ROUTER, bound on tcp://127.0.0.1:* and on inproc://mdp-reference, served by the main
   thread. It routes client requests by service name to waiting workers, least recently used first,
   queues them (up to MAX_QUEUED per service) while no worker waits, sends HEARTBEAT to idle
   workers every HEARTBEAT_MS, forgets workers silent for HEARTBEAT_MS × LIVENESS, and answers an
   invalid or unexpected worker command with DISCONNECT. Like Lyceum's broker it accepts routing
   frames before a client's empty frame (Lyceum's AsyncClient tags each request with one) and
   returns them with the reply; workers see only the client's routing id. Bodies and envelopes
   are moved, as zmq_msg_t, from the socket they arrive on to the socket they leave by, never
   copied; only routing ids, which the broker keeps as bytes to find workers and check replies,
   are sent from those bytes. Left out, since the benchmark never needs them: 8/MMI, Lyceum's
   error replies (a request beyond a full queue is dropped with a line on stderr), and the
   timeout for requests to a service no worker offers (they wait in its queue).

   Workers: WORKERS sessions, one DEALER each, offering the service "echo": READY, then a REPLY
   with the request's client address and body for each REQUEST, HEARTBEAT when idle, and a new
   socket after DISCONNECT or silence from the broker. With CATALOG, a file of ID<TAB>REPLY lines,
   they offer "catalog" instead and answer each request as Benchmarks/floors/answers.h says (a
   course's reply as Lyceum's catalog gave it): the floor of a request through `lyceum broker` to a
   `lyceum worker --service catalog` (issue 38), driven by `lyceum bench --scenario catalog-read`. `tcp`: the workers have a context of their
   own and connect over loopback TCP, as another process would; `inproc`: they share the broker's
   context and connect over inproc. All sessions are served by one thread that polls them, as
   Lyceum's WorkerPool does: on this 2-core machine the client, the broker and the workers already
   outnumber the cores, and one thread per session would add switches between threads, not work.

   Both loops wait as Lyceum's do (its SocketWaiter): one system poll on the sockets' ZMQ_FDs,
   where zmq_poll would also read every socket's ZMQ_EVENTS before and after each wait. ZMQ_FD
   only announces what a socket has not yet processed, and every send and receive processes it,
   so a loop sleeps only when each socket's last use was a receive that found nothing. */
#define _GNU_SOURCE
#include "../floors/answers.h"
#include <zmq.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_HEADER "MDPC01"
#define WORKER_HEADER "MDPW01"
#define HEADER_SIZE 6
enum command { READY = 1, REQUEST = 2, REPLY = 3, HEARTBEAT = 4, DISCONNECT = 5 };

#define HEARTBEAT_MS 2500
#define LIVENESS 3
#define EXPIRY_MS (HEARTBEAT_MS * LIVENESS)
/* A worker with a request in hand may be silent this long before it is forgotten. */
#define MAX_REQUEST_MS 60000
#define MAX_QUEUED 100000
/* Messages received from one socket before the loop looks at its timers and other sockets. */
#define BATCH 256
/* Messages with more frames are dropped; routing ids, service names at most MAX_ID bytes. */
#define MAX_FRAMES 64
#define MAX_ENVELOPE 8
#define MAX_ID 255
#define INPROC_ENDPOINT "inproc://mdp-reference"
/* "echo", or "catalog" when the workers answer from a catalog file. */
static const char *service = "echo";

static volatile sig_atomic_t stopping;

static void fail(const char *call) {
    fprintf(stderr, "mdp_reference: %s: %s\n", call, zmq_strerror(zmq_errno()));
    exit(1);
}

#define CHECK(call) do { if ((call) == -1) fail(#call); } while (0)

static int64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- Messages ---- */

/* One multipart message as received; every frame is closed after handling, whether it was moved
   out (a moved-from frame is empty) or not. */
struct frames {
    int count;
    zmq_msg_t msg[MAX_FRAMES];
};

static size_t frame_size(struct frames *in, int index) { return zmq_msg_size(&in->msg[index]); }

static bool frame_equals(struct frames *in, int index, const void *bytes, size_t size) {
    return frame_size(in, index) == size && memcmp(zmq_msg_data(&in->msg[index]), bytes, size) == 0;
}

static void close_frames(struct frames *in) {
    for (int index = 0; index < in->count; index++) zmq_msg_close(&in->msg[index]);
    in->count = 0;
}

/* Receives the next whole message without waiting. Returns false when none is waiting; a message
   of more than MAX_FRAMES frames is received, dropped, and leaves `in` empty. */
static bool receive_message(void *socket, struct frames *in) {
    int received = 0;
    in->count = 0;
    bool more = true;
    while (more) {
        zmq_msg_t *msg = &in->msg[in->count < MAX_FRAMES ? in->count : MAX_FRAMES - 1];
        if (in->count == MAX_FRAMES) zmq_msg_close(msg);
        else in->count++;
        zmq_msg_init(msg);
        if (zmq_msg_recv(msg, socket, ZMQ_DONTWAIT) == -1) {
            if (received == 0 && (zmq_errno() == EAGAIN || zmq_errno() == EINTR)) {
                close_frames(in);
                return false;
            }
            fail("zmq_msg_recv");
        }
        received++;
        more = zmq_msg_more(msg);
    }
    if (received > MAX_FRAMES) {
        fprintf(stderr, "mdp_reference: dropped a message of %d frames\n", received);
        close_frames(in);
    }
    return true;
}

static void send_frame(void *socket, zmq_msg_t *msg, bool more) {
    CHECK(zmq_msg_send(msg, socket, more ? ZMQ_SNDMORE : 0));
}

static void send_bytes(void *socket, const void *bytes, size_t size, bool more) {
    CHECK(zmq_send(socket, bytes, size, more ? ZMQ_SNDMORE : 0));
}

/* Sends "", header and a command byte: how every worker command starts after the routing id. */
static void send_worker_header(void *socket, enum command command, bool more) {
    uint8_t byte = (uint8_t)command;
    send_bytes(socket, "", 0, true);
    send_bytes(socket, WORKER_HEADER, HEADER_SIZE, true);
    send_bytes(socket, &byte, 1, more);
}

static void *open_socket(void *context, int type) {
    void *socket = zmq_socket(context, type);
    if (!socket) fail("zmq_socket");
    int linger = 0;
    CHECK(zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger));
    return socket;
}

static int socket_fd(void *socket) {
    int fd;
    size_t size = sizeof fd;
    CHECK(zmq_getsockopt(socket, ZMQ_FD, &fd, &size));
    return fd;
}

/* Waits up to `timeout` ms for one of `fds` to be readable or a signal. */
static void wait_for(struct pollfd *fds, int count, int64_t timeout) {
    if (poll(fds, (nfds_t)count, timeout > 0 ? (int)timeout : 0) == -1 && errno != EINTR) {
        perror("mdp_reference: poll");
        exit(1);
    }
}

/* ---- A table of byte keys (routing ids, service names), chained ---- */

struct entry {
    struct entry *next;
    size_t key_size;
    uint8_t key[MAX_ID];
};

struct table {
    struct entry **buckets;
    size_t capacity, count;
};

static uint64_t hash_bytes(const uint8_t *bytes, size_t size) {
    uint64_t hash = 14695981039346656037u; /* FNV-1a */
    for (size_t index = 0; index < size; index++) hash = (hash ^ bytes[index]) * 1099511628211u;
    return hash;
}

static struct entry **table_slot(struct table *table, const void *key, size_t size) {
    struct entry **slot = &table->buckets[hash_bytes(key, size) & (table->capacity - 1)];
    while (*slot && !((*slot)->key_size == size && memcmp((*slot)->key, key, size) == 0)) slot = &(*slot)->next;
    return slot;
}

static void *table_find(struct table *table, const void *key, size_t size) { return *table_slot(table, key, size); }

static void table_grow(struct table *table) {
    struct table grown = { calloc(table->capacity * 2, sizeof *grown.buckets), table->capacity * 2, table->count };
    if (!grown.buckets) { perror("mdp_reference: calloc"); exit(1); }
    for (size_t index = 0; index < table->capacity; index++) {
        for (struct entry *entry = table->buckets[index], *next; entry; entry = next) {
            next = entry->next;
            struct entry **slot = &grown.buckets[hash_bytes(entry->key, entry->key_size) & (grown.capacity - 1)];
            entry->next = *slot;
            *slot = entry;
        }
    }
    free(table->buckets);
    *table = grown;
}

/* Adds `entry`, whose key is set and not yet in the table. */
static void table_insert(struct table *table, struct entry *entry) {
    if (table->count >= table->capacity) table_grow(table);
    struct entry **slot = &table->buckets[hash_bytes(entry->key, entry->key_size) & (table->capacity - 1)];
    entry->next = *slot;
    *slot = entry;
    table->count++;
}

static void table_remove(struct table *table, struct entry *entry) {
    *table_slot(table, entry->key, entry->key_size) = entry->next;
    table->count--;
}

static void *allocate(size_t size) {
    void *memory = calloc(1, size);
    if (!memory) { perror("mdp_reference: calloc"); exit(1); }
    return memory;
}

/* ---- Broker ---- */

struct request {
    struct request *next;
    int envelope_count, body_count;
    zmq_msg_t frames[]; /* client routing id, envelope, body */
};

struct service {
    struct entry entry; /* first: the name */
    struct worker *waiting_first, *waiting_last; /* least recently used first */
    struct request *queue_first, *queue_last;
    size_t queued;
};

struct worker {
    struct entry entry; /* first: the routing id */
    struct service *service;
    struct worker *previous, *next; /* in the service's waiting list while idle */
    int64_t heard, busy_since;
    bool busy;
    /* The request in hand: its client, and the envelope to return with the reply. */
    size_t client_size;
    uint8_t client[MAX_ID];
    int envelope_count;
    zmq_msg_t envelope[MAX_ENVELOPE];
};

struct broker {
    void *socket;
    struct table workers, services;
    struct frames in;
};

static void unlink_waiting(struct worker *worker) {
    struct service *service = worker->service;
    if (worker->previous) worker->previous->next = worker->next;
    else service->waiting_first = worker->next;
    if (worker->next) worker->next->previous = worker->previous;
    else service->waiting_last = worker->previous;
    worker->previous = worker->next = NULL;
}

/* Hands a request to `worker`: the frames are moved, the client and envelope kept for the reply. */
static void send_request(struct broker *broker, struct worker *worker, zmq_msg_t *client,
                         zmq_msg_t *envelope, int envelope_count, zmq_msg_t *body, int body_count) {
    worker->busy = true;
    worker->busy_since = now_ms();
    worker->client_size = zmq_msg_size(client);
    memcpy(worker->client, zmq_msg_data(client), worker->client_size);
    worker->envelope_count = envelope_count;
    for (int index = 0; index < envelope_count; index++) {
        zmq_msg_init(&worker->envelope[index]);
        zmq_msg_move(&worker->envelope[index], &envelope[index]);
    }
    send_bytes(broker->socket, worker->entry.key, worker->entry.key_size, true);
    send_worker_header(broker->socket, REQUEST, true);
    send_frame(broker->socket, client, true);
    send_bytes(broker->socket, "", 0, true);
    for (int index = 0; index < body_count; index++) send_frame(broker->socket, &body[index], index < body_count - 1);
}

/* `worker` is free: it takes the oldest queued request of its service, or waits for one. */
static void worker_waiting(struct broker *broker, struct worker *worker) {
    struct service *service = worker->service;
    worker->busy = false;
    struct request *request = service->queue_first;
    if (!request) {
        worker->previous = service->waiting_last;
        if (service->waiting_last) service->waiting_last->next = worker;
        else service->waiting_first = worker;
        service->waiting_last = worker;
        return;
    }
    service->queue_first = request->next;
    if (!service->queue_first) service->queue_last = NULL;
    service->queued--;
    int body_start = 1 + request->envelope_count;
    send_request(broker, worker, &request->frames[0], &request->frames[1], request->envelope_count,
                 &request->frames[body_start], request->body_count);
    for (int index = 0; index < body_start + request->body_count; index++) zmq_msg_close(&request->frames[index]);
    free(request);
}

static struct service *find_service(struct broker *broker, const void *name, size_t size) {
    struct service *service = table_find(&broker->services, name, size);
    if (service) return service;
    service = allocate(sizeof *service);
    service->entry.key_size = size;
    memcpy(service->entry.key, name, size);
    table_insert(&broker->services, &service->entry);
    return service;
}

/* Forgets `worker`, closing what it holds of the request in hand; the client's retry, if any,
   goes to another worker. */
static void delete_worker(struct broker *broker, struct worker *worker) {
    if (!worker->busy) unlink_waiting(worker);
    for (int index = 0; index < (worker->busy ? worker->envelope_count : 0); index++) zmq_msg_close(&worker->envelope[index]);
    table_remove(&broker->workers, &worker->entry);
    free(worker);
}

/* Sends DISCONNECT to the peer at routing id `id` and forgets it, if it was a worker. */
static void disconnect_worker(struct broker *broker, zmq_msg_t *id, struct worker *worker) {
    send_bytes(broker->socket, zmq_msg_data(id), zmq_msg_size(id), true);
    send_worker_header(broker->socket, DISCONNECT, false);
    if (worker) delete_worker(broker, worker);
}

/* [client, envelope..., "", MDPC01, service, body...], `empty` the index of the "" frame. */
static void handle_client(struct broker *broker, int empty) {
    struct frames *in = &broker->in;
    int service_index = empty + 2, body_start = empty + 3, envelope_count = empty - 1;
    if (envelope_count > MAX_ENVELOPE || in->count <= body_start || frame_size(in, service_index) == 0
        || frame_size(in, service_index) > MAX_ID) {
        fprintf(stderr, "mdp_reference: dropped an invalid client request\n");
        return;
    }
    struct service *service = find_service(broker, zmq_msg_data(&in->msg[service_index]), frame_size(in, service_index));
    int body_count = in->count - body_start;
    struct worker *worker = service->waiting_first;
    if (worker) {
        unlink_waiting(worker);
        send_request(broker, worker, &in->msg[0], &in->msg[1], envelope_count, &in->msg[body_start], body_count);
        return;
    }
    if (service->queued >= MAX_QUEUED) {
        fprintf(stderr, "mdp_reference: queue of service '%.*s' full, request dropped\n",
                (int)service->entry.key_size, (const char *)service->entry.key);
        return;
    }
    struct request *request = allocate(sizeof *request + (size_t)(1 + envelope_count + body_count) * sizeof(zmq_msg_t));
    request->envelope_count = envelope_count;
    request->body_count = body_count;
    for (int index = 0; index < 1 + envelope_count; index++) {
        zmq_msg_init(&request->frames[index]);
        zmq_msg_move(&request->frames[index], &in->msg[index]);
    }
    for (int index = 0; index < body_count; index++) {
        zmq_msg_init(&request->frames[1 + envelope_count + index]);
        zmq_msg_move(&request->frames[1 + envelope_count + index], &in->msg[body_start + index]);
    }
    if (service->queue_last) service->queue_last->next = request;
    else service->queue_first = request;
    service->queue_last = request;
    service->queued++;
}

/* REPLY [worker, "", MDPW01, 0x03, client, "", body...] goes back to the client as
   [client, envelope..., "", MDPC01, service, body...]. */
static bool forward_reply(struct broker *broker, struct worker *worker) {
    struct frames *in = &broker->in;
    if (in->count < 7 || frame_size(in, 5) != 0 || !worker || !worker->busy
        || !frame_equals(in, 4, worker->client, worker->client_size)) return false;
    send_bytes(broker->socket, worker->client, worker->client_size, true);
    for (int index = 0; index < worker->envelope_count; index++) send_frame(broker->socket, &worker->envelope[index], true);
    send_bytes(broker->socket, "", 0, true);
    send_bytes(broker->socket, CLIENT_HEADER, HEADER_SIZE, true);
    send_bytes(broker->socket, worker->service->entry.key, worker->service->entry.key_size, true);
    for (int index = 6; index < in->count; index++) send_frame(broker->socket, &in->msg[index], index < in->count - 1);
    worker->heard = now_ms();
    worker_waiting(broker, worker);
    return true;
}

/* [worker, "", MDPW01, command, ...] */
static void handle_worker(struct broker *broker) {
    struct frames *in = &broker->in;
    zmq_msg_t *id = &in->msg[0];
    struct worker *worker = table_find(&broker->workers, zmq_msg_data(id), zmq_msg_size(id));
    int command = frame_size(in, 3) == 1 ? *(uint8_t *)zmq_msg_data(&in->msg[3]) : 0;
    switch (command) {
    case READY:
        if (worker || in->count != 5 || frame_size(in, 4) == 0 || frame_size(in, 4) > MAX_ID) break;
        worker = allocate(sizeof *worker);
        worker->entry.key_size = zmq_msg_size(id);
        memcpy(worker->entry.key, zmq_msg_data(id), worker->entry.key_size);
        table_insert(&broker->workers, &worker->entry);
        worker->service = find_service(broker, zmq_msg_data(&in->msg[4]), frame_size(in, 4));
        worker->heard = now_ms();
        worker_waiting(broker, worker);
        return;
    case REPLY:
        if (forward_reply(broker, worker)) return;
        break;
    case HEARTBEAT:
        if (!worker || in->count != 4) break;
        worker->heard = now_ms();
        return;
    case DISCONNECT:
        if (worker) delete_worker(broker, worker);
        return;
    }
    disconnect_worker(broker, id, worker);
}

static void handle_message(struct broker *broker) {
    struct frames *in = &broker->in;
    int empty = 1;
    while (empty < in->count && frame_size(in, empty) != 0) empty++;
    if (empty + 1 < in->count && frame_equals(in, empty + 1, CLIENT_HEADER, HEADER_SIZE)) {
        handle_client(broker, empty);
    } else if (empty == 1 && in->count >= 4 && frame_equals(in, 2, WORKER_HEADER, HEADER_SIZE)) {
        handle_worker(broker);
    } else if (in->count > 0) {
        fprintf(stderr, "mdp_reference: dropped a message that is neither MDP/Client nor MDP/Worker\n");
    }
}

/* Sends HEARTBEAT to every idle worker and forgets every expired one. */
static void heartbeat(struct broker *broker) {
    int64_t now = now_ms();
    for (size_t bucket = 0; bucket < broker->workers.capacity; bucket++) {
        for (struct entry *entry = broker->workers.buckets[bucket], *next; entry; entry = next) {
            next = entry->next;
            struct worker *worker = (struct worker *)entry;
            if (worker->busy ? now - worker->busy_since > MAX_REQUEST_MS : now - worker->heard > EXPIRY_MS) {
                fprintf(stderr, "mdp_reference: worker expired\n");
                delete_worker(broker, worker);
            } else if (!worker->busy) {
                send_bytes(broker->socket, entry->key, entry->key_size, true);
                send_worker_header(broker->socket, HEARTBEAT, false);
            }
        }
    }
}

static void free_broker(struct broker *broker) {
    for (size_t bucket = 0; bucket < broker->workers.capacity; bucket++)
        while (broker->workers.buckets[bucket]) delete_worker(broker, (struct worker *)broker->workers.buckets[bucket]);
    for (size_t bucket = 0; bucket < broker->services.capacity; bucket++) {
        while (broker->services.buckets[bucket]) {
            struct service *service = (struct service *)broker->services.buckets[bucket];
            for (struct request *request = service->queue_first, *next; request; request = next) {
                next = request->next;
                for (int index = 0; index < 1 + request->envelope_count + request->body_count; index++)
                    zmq_msg_close(&request->frames[index]);
                free(request);
            }
            table_remove(&broker->services, &service->entry);
            free(service);
        }
    }
    free(broker->workers.buckets);
    free(broker->services.buckets);
}

/* Serves until stdin closes or a signal asks to stop. */
static void serve_broker(struct broker *broker) {
    struct pollfd fds[] = { { socket_fd(broker->socket), POLLIN, 0 }, { STDIN_FILENO, POLLIN, 0 } };
    int64_t next_heartbeat = now_ms() + HEARTBEAT_MS;
    bool may_hold_messages = true;
    while (!stopping) {
        if (!may_hold_messages) wait_for(fds, 2, next_heartbeat - now_ms());
        if (fds[1].revents) {
            fds[1].revents = 0;
            char ignored[256];
            ssize_t size = read(STDIN_FILENO, ignored, sizeof ignored);
            if (size == 0 || (size < 0 && errno != EINTR)) return;
        }
        int received = 0;
        while (received < BATCH && receive_message(broker->socket, &broker->in)) {
            handle_message(broker);
            close_frames(&broker->in);
            received++;
        }
        may_hold_messages = received == BATCH;
        if (now_ms() >= next_heartbeat) {
            heartbeat(broker);
            next_heartbeat = now_ms() + HEARTBEAT_MS;
            may_hold_messages = true;
        }
    }
}

/* ---- Echo workers ---- */

struct session {
    void *socket;
    int64_t heard, next_heartbeat;
    /* False only when the socket's last use was a receive that found nothing. */
    bool may_hold_messages;
};

struct workers {
    void *context;
    const char *endpoint;
    int count;
    struct session *sessions;
    struct pollfd *fds;
    struct frames in;
    atomic_bool stop;
};

/* Opens a new socket for session `index` and sends READY. */
static void connect_session(struct workers *workers, int index) {
    struct session *session = &workers->sessions[index];
    if (session->socket) CHECK(zmq_close(session->socket));
    session->socket = open_socket(workers->context, ZMQ_DEALER);
    CHECK(zmq_connect(session->socket, workers->endpoint));
    send_worker_header(session->socket, READY, true);
    send_bytes(session->socket, service, strlen(service), false);
    session->heard = now_ms();
    session->next_heartbeat = session->heard + HEARTBEAT_MS;
    session->may_hold_messages = true;
    workers->fds[index] = (struct pollfd){ socket_fd(session->socket), POLLIN, 0 };
}

/* Handles ["", MDPW01, command, ...] from the broker; returns false when the session must start over. */
static bool handle_command(struct workers *workers, struct session *session) {
    struct frames *in = &workers->in;
    if (in->count < 3 || frame_size(in, 0) != 0 || !frame_equals(in, 1, WORKER_HEADER, HEADER_SIZE) || frame_size(in, 2) != 1) {
        fprintf(stderr, "mdp_reference: worker ignored an invalid message\n");
        return true;
    }
    session->heard = now_ms();
    switch (*(uint8_t *)zmq_msg_data(&in->msg[2])) {
    case REQUEST: /* ["", MDPW01, 0x02, client, "", body...] */
        if (in->count < 6 || frame_size(in, 4) != 0) break;
        send_worker_header(session->socket, REPLY, true);
        send_frame(session->socket, &in->msg[3], true);
        send_bytes(session->socket, "", 0, true);
        if (answer_course_count > 0) {
            static char out[ANSWER_MAX];
            size_t size = answer(service, strlen(service), zmq_msg_data(&in->msg[5]), frame_size(in, 5), 0, out);
            send_bytes(session->socket, out, size, false);
        } else {
            for (int index = 5; index < in->count; index++) send_frame(session->socket, &in->msg[index], index < in->count - 1);
        }
        session->next_heartbeat = session->heard + HEARTBEAT_MS;
        return true;
    case HEARTBEAT:
        return true;
    case DISCONNECT:
        return false;
    }
    fprintf(stderr, "mdp_reference: worker ignored an invalid command\n");
    return true;
}

static void *serve_workers(void *argument) {
    struct workers *workers = argument;
    for (int index = 0; index < workers->count; index++) connect_session(workers, index);
    while (!atomic_load(&workers->stop)) {
        /* At most 100 ms, so that `stop` is seen soon. */
        int64_t now = now_ms(), wake = now + 100;
        for (int index = 0; index < workers->count; index++) {
            struct session *session = &workers->sessions[index];
            if (session->may_hold_messages) wake = now;
            if (session->next_heartbeat < wake) wake = session->next_heartbeat;
            if (session->heard + EXPIRY_MS < wake) wake = session->heard + EXPIRY_MS;
        }
        if (wake > now) wait_for(workers->fds, workers->count, wake - now);
        for (int index = 0; index < workers->count; index++) {
            struct session *session = &workers->sessions[index];
            bool connected = true;
            if (session->may_hold_messages || workers->fds[index].revents) {
                workers->fds[index].revents = 0;
                int received = 0;
                while (connected && received < BATCH && receive_message(session->socket, &workers->in)) {
                    connected = handle_command(workers, session);
                    close_frames(&workers->in);
                    received++;
                }
                session->may_hold_messages = received == BATCH;
            }
            now = now_ms();
            if (!connected || now - session->heard > EXPIRY_MS) {
                connect_session(workers, index);
            } else if (now >= session->next_heartbeat) {
                send_worker_header(session->socket, HEARTBEAT, false);
                session->next_heartbeat = now + HEARTBEAT_MS;
                session->may_hold_messages = true;
            }
        }
    }
    for (int index = 0; index < workers->count; index++) CHECK(zmq_close(workers->sessions[index].socket));
    return NULL;
}

/* ---- Process ---- */

static void request_stop(int signal) {
    (void)signal;
    stopping = 1;
}

int main(int argc, char **argv) {
    int count = argc == 3 || argc == 4 ? atoi(argv[2]) : 0;
    bool inproc = count > 0 && strcmp(argv[1], "inproc") == 0;
    if (count < 1 || count > 4096 || !(inproc || strcmp(argv[1], "tcp") == 0)) {
        fprintf(stderr, "usage: mdp_reference tcp|inproc WORKERS [CATALOG]\n");
        return 2;
    }
    if (argc == 4) {
        answers_load(argv[3]);
        service = "catalog";
    }
    struct sigaction action = { .sa_handler = request_stop };
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    void *context = zmq_ctx_new();
    if (!context) fail("zmq_ctx_new");
    struct broker *broker = allocate(sizeof *broker);
    broker->workers = (struct table){ allocate(64 * sizeof(struct entry *)), 64, 0 };
    broker->services = (struct table){ allocate(8 * sizeof(struct entry *)), 8, 0 };
    broker->socket = open_socket(context, ZMQ_ROUTER);
    CHECK(zmq_bind(broker->socket, "tcp://127.0.0.1:*"));
    char endpoint[256];
    size_t length = sizeof endpoint;
    CHECK(zmq_getsockopt(broker->socket, ZMQ_LAST_ENDPOINT, endpoint, &length));
    CHECK(zmq_bind(broker->socket, INPROC_ENDPOINT));
    printf("%s\n", endpoint);
    fflush(stdout);

    struct workers *workers = allocate(sizeof *workers);
    workers->context = inproc ? context : zmq_ctx_new();
    if (!workers->context) fail("zmq_ctx_new");
    workers->endpoint = inproc ? INPROC_ENDPOINT : endpoint;
    workers->count = count;
    workers->sessions = allocate((size_t)count * sizeof *workers->sessions);
    workers->fds = allocate((size_t)count * sizeof *workers->fds);
    atomic_init(&workers->stop, false);
    /* Signals go to the broker's thread, whose poll they interrupt. */
    sigset_t blocked, previous;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    pthread_sigmask(SIG_BLOCK, &blocked, &previous);
    pthread_t thread;
    if (pthread_create(&thread, NULL, serve_workers, workers) != 0) { perror("mdp_reference: pthread_create"); return 1; }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);

    serve_broker(broker);

    atomic_store(&workers->stop, true);
    pthread_join(thread, NULL);
    if (!inproc) CHECK(zmq_ctx_term(workers->context));
    free(workers->sessions);
    free(workers->fds);
    free(workers);
    CHECK(zmq_close(broker->socket));
    free_broker(broker);
    free(broker);
    CHECK(zmq_ctx_term(context));
    return 0;
}
