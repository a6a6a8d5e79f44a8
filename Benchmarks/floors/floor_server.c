/* floor_server: the least a server over libzmq does for a request of Lyceum's shape (issue 38), so
   that Benchmarks/suite.sh can print each of `lyceum serve`'s rows as a ratio to what libzmq allows
   on the same machine, driven by the same `lyceum bench`.

   Usage: floor_server --endpoint ENDPOINT --journal FILE [--sync] [--catalog FILE] [--curve-secret FILE]
     Binds one ROUTER on ENDPOINT and serves 7/MDP client requests (https://rfc.zeromq.org/spec/7/:
     [client, envelope…, "", MDPC01, service, body]) until SIGTERM or SIGINT; exits 0, or 1 with the
     failing call on stderr.
     --sync          one fdatasync of the journal per wake-up that brought writes, before their
                     replies: the floor for `--durability always`; without it the floor for reads
                     and for writes that are not synced before their reply
     --catalog FILE  the catalog's replies, ID<TAB>REPLY lines (answers.h)
     --curve-secret FILE  CURVE server with the secret key of a zcert secret file (as `lyceum keys
                     generate` writes); any client key is accepted, as no ZAP handler runs
     On SIGUSR1 it writes one line to stderr, `floor_server: requests N records R syncs S` (so far),
     which the suite reads before and after a run, as it reads Lyceum's journal counters.

   Per request: the frames are received, the body scanned for its op (no JSON tree: what a parse
   costs is not libzmq's), and the reply written (answers.h). A write (books create and update,
   progress mark_watched and mark_unwatched) appends one JSON line of about 400 bytes, with a
   CRC-32 of its value as Lyceum's records carry, by one pwrite at the end of the file; its reply
   waits until every message that wake-up brought (up to BATCH) is handled and, with --sync, the
   file is synced once. Reads are answered at once. The loop waits as mdp_reference's does: a system
   poll on ZMQ_FD, only after a receive found the socket empty. */
#define _GNU_SOURCE
#include "answers.h"
#include <zmq.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER "MDPC01"
#define BATCH 256
#define MAX_FRAMES 16
/* A record line is at least this long: Lyceum's records of a book are about as long. */
#define RECORD_MIN 400

static volatile sig_atomic_t stopping, reporting;
static void request_stop(int signal) { (void)signal; stopping = 1; }
static void request_report(int signal) { (void)signal; reporting = 1; }

static void fail(const char *call) {
    fprintf(stderr, "floor_server: %s: %s\n", call, errno ? strerror(errno) : "failed");
    exit(1);
}

#define CHECK(call) do { if ((call) == -1) fail(#call); } while (0)

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t index = 0; index < 256; index++) {
        uint32_t crc = index;
        for (int bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
        crc_table[index] = crc;
    }
}

static uint32_t crc32(const char *bytes, size_t size) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t index = 0; index < size; index++) crc = crc_table[(crc ^ (uint8_t)bytes[index]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* A write's reply, held until the wake-up's records are appended (and synced). */
struct held {
    int frame_count; /* client, envelope…, "" */
    zmq_msg_t frames[MAX_FRAMES];
    char service[32];
    size_t service_size, reply_size;
    char reply[ANSWER_MAX];
};

static struct held held[BATCH];
static int held_count;
static int journal;
static off_t journal_end;
static uint64_t sequence, requests, syncs;

/* The 32-byte secret key of a zcert secret file (`secret-key = "Z85"`). */
static void read_secret(const char *path, uint8_t key[32]) {
    FILE *file = fopen(path, "r");
    if (!file) fail(path);
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, file)) {
        char *start = strstr(line, "secret-key");
        char *quote = start ? strchr(start, '"') : NULL;
        if (quote && strlen(quote) > 41 && quote[41] == '"') {
            quote[41] = 0;
            found = zmq_z85_decode(key, quote + 1) != NULL;
        }
    }
    fclose(file);
    if (!found) { fprintf(stderr, "floor_server: %s holds no secret-key\n", path); exit(1); }
}

static void send_bytes(void *socket, const void *bytes, size_t size, bool more) {
    if (zmq_send(socket, bytes, size, more ? ZMQ_SNDMORE : 0) == -1) fail("zmq_send");
}

/* Sends the reply to a request whose routing frames (client, envelope…, "") are `frames`. */
static void reply(void *socket, zmq_msg_t *frames, int frame_count, const char *service, size_t service_size,
                  const char *body, size_t size) {
    for (int index = 0; index < frame_count; index++) {
        if (zmq_msg_send(&frames[index], socket, ZMQ_SNDMORE) == -1) fail("zmq_msg_send");
    }
    send_bytes(socket, HEADER, 6, true);
    send_bytes(socket, service, service_size, true);
    send_bytes(socket, body, size, false);
}

/* Appends the record of a write: its sequence, time, CRC and the request as its value. */
static void append_record(const char *service, size_t service_size, const char *body, size_t size) {
    static char line[ANSWER_MAX + 512];
    uint32_t crc = crc32(body, size);
    int written = snprintf(line, sizeof line, "{\"seq\":%llu,\"time\":" ANSWER_TIME ",\"crc\":\"%08x\",\"collection\":\"%.*s\",\"value\":%.*s}",
                           (unsigned long long)++sequence, crc, (int)service_size, service, (int)size, body);
    if (written < 0 || written >= (int)sizeof line - RECORD_MIN) fail("record too long");
    while (written < RECORD_MIN - 1) line[written++] = ' ';
    line[written++] = '\n';
    ssize_t done = pwrite(journal, line, (size_t)written, journal_end);
    if (done != written) fail("pwrite");
    journal_end += written;
}

/* Receives and handles one message; false when none was waiting. */
static bool handle_one(void *socket) {
    zmq_msg_t frames[MAX_FRAMES];
    int count = 0;
    bool more = true;
    while (more) {
        zmq_msg_t *frame = &frames[count < MAX_FRAMES ? count : MAX_FRAMES - 1];
        if (count == MAX_FRAMES) zmq_msg_close(frame);
        else count++;
        zmq_msg_init(frame);
        if (zmq_msg_recv(frame, socket, ZMQ_DONTWAIT) == -1) {
            if (count == 1 && (errno == EAGAIN || errno == EINTR)) { zmq_msg_close(frame); return false; }
            fail("zmq_msg_recv");
        }
        more = zmq_msg_more(frame);
    }
    /* [client, envelope…, "", MDPC01, service, body] */
    int empty = 1;
    while (empty < count && zmq_msg_size(&frames[empty]) != 0) empty++;
    if (count == MAX_FRAMES || empty + 3 != count - 1 || zmq_msg_size(&frames[empty + 1]) != 6
        || memcmp(zmq_msg_data(&frames[empty + 1]), HEADER, 6) != 0 || zmq_msg_size(&frames[empty + 2]) > 31) {
        fprintf(stderr, "floor_server: dropped a message that is not a 7/MDP client request\n");
        for (int index = 0; index < count; index++) zmq_msg_close(&frames[index]);
        return true;
    }
    requests++;
    const char *service = zmq_msg_data(&frames[empty + 2]), *body = zmq_msg_data(&frames[empty + 3]);
    size_t service_size = zmq_msg_size(&frames[empty + 2]), size = zmq_msg_size(&frames[empty + 3]);
    if (answer_writes(body, size)) {
        append_record(service, service_size, body, size);
        struct held *write = &held[held_count++];
        write->frame_count = empty + 1;
        for (int index = 0; index <= empty; index++) {
            zmq_msg_init(&write->frames[index]);
            zmq_msg_move(&write->frames[index], &frames[index]);
        }
        memcpy(write->service, service, service_size);
        write->service_size = service_size;
        write->reply_size = answer(service, service_size, body, size, sequence, write->reply);
    } else {
        static char out[ANSWER_MAX];
        size_t out_size = answer(service, service_size, body, size, 0, out);
        reply(socket, frames, empty + 1, service, service_size, out, out_size);
    }
    for (int index = 0; index < count; index++) zmq_msg_close(&frames[index]);
    return true;
}

int main(int argc, char **argv) {
    const char *endpoint = NULL, *journal_path = NULL, *secret = NULL;
    bool sync = false;
    for (int index = 1; index < argc; index++) {
        bool valued = index + 1 < argc;
        if (strcmp(argv[index], "--sync") == 0) sync = true;
        else if (valued && strcmp(argv[index], "--endpoint") == 0) endpoint = argv[++index];
        else if (valued && strcmp(argv[index], "--journal") == 0) journal_path = argv[++index];
        else if (valued && strcmp(argv[index], "--catalog") == 0) answers_load(argv[++index]);
        else if (valued && strcmp(argv[index], "--curve-secret") == 0) secret = argv[++index];
        else endpoint = NULL, index = argc;
    }
    if (!endpoint || !journal_path) {
        fprintf(stderr, "usage: floor_server --endpoint ENDPOINT --journal FILE [--sync] [--catalog FILE] [--curve-secret FILE]\n");
        return 2;
    }
    crc_init();
    journal = open(journal_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (journal == -1) fail(journal_path);
    struct sigaction action = { .sa_handler = request_stop };
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    struct sigaction report = { .sa_handler = request_report };
    sigemptyset(&report.sa_mask);
    sigaction(SIGUSR1, &report, NULL);

    void *context = zmq_ctx_new();
    if (!context) fail("zmq_ctx_new");
    void *socket = zmq_socket(context, ZMQ_ROUTER);
    if (!socket) fail("zmq_socket");
    int zero = 0, one = 1;
    CHECK(zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero));
    if (secret) {
        uint8_t key[32];
        read_secret(secret, key);
        CHECK(zmq_setsockopt(socket, ZMQ_CURVE_SERVER, &one, sizeof one));
        CHECK(zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, key, sizeof key));
    }
    CHECK(zmq_bind(socket, endpoint));
    int fd;
    size_t fd_size = sizeof fd;
    CHECK(zmq_getsockopt(socket, ZMQ_FD, &fd, &fd_size));

    while (!stopping) {
        if (reporting) {
            reporting = 0;
            fprintf(stderr, "floor_server: requests %llu records %llu syncs %llu\n", (unsigned long long)requests,
                    (unsigned long long)sequence, (unsigned long long)syncs);
        }
        int received = 0;
        while (received < BATCH && handle_one(socket)) received++;
        if (held_count > 0) {
            if (sync) {
                if (fdatasync(journal) == -1) fail("fdatasync");
                syncs++;
            }
            for (int index = 0; index < held_count; index++) {
                struct held *write = &held[index];
                reply(socket, write->frames, write->frame_count, write->service, write->service_size, write->reply, write->reply_size);
                for (int frame = 0; frame < write->frame_count; frame++) zmq_msg_close(&write->frames[frame]);
            }
            held_count = 0;
            continue; /* the socket's last use was a send: receive again before sleeping */
        }
        if (received == BATCH) continue;
        struct pollfd wait = { fd, POLLIN, 0 };
        if (poll(&wait, 1, 100) == -1 && errno != EINTR) fail("poll");
    }
    CHECK(zmq_close(socket));
    zmq_ctx_term(context);
    close(journal);
    return 0;
}
