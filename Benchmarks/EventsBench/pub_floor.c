// pub_floor: what libzmq alone costs a process that publishes each event as one message to one
// TCP subscriber, and how long such a message takes to arrive (issue 6): the floor under any
// publisher built on libzmq on this machine, measured in C.
//
// The parent binds a PUB socket and sends MESSAGES two-frame messages (a topic and a SIZE-byte
// body) at RATE per second, in groups of BATCH, as a server that publishes after each batch of
// requests would: first with no subscriber, then with a SUB in a forked process of its own (whose
// CPU is not counted), which notes each message's delay from send to arrival. It prints the CPU
// time (user + system, all of the parent's threads: the sending thread and libzmq's I/O thread)
// per message with the subscriber and without, then the delay's p50 and p99 in µs.
//
// Usage: pub_floor RATE MESSAGES SIZE BATCH    e.g. pub_floor 10000 50000 450 2
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zmq.h>

static void fail(const char *what) {
    fprintf(stderr, "pub_floor: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static void sleep_until(const struct timespec *start, long long offset_ns) {
    struct timespec deadline = *start;
    long long ns = deadline.tv_nsec + offset_ns;
    deadline.tv_sec += ns / 1000000000LL;
    deadline.tv_nsec = ns % 1000000000LL;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
}

static long long now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

static int compare(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

// Subscribes to everything at ENDPOINT, notes each body's delay (the send time is its first 8
// bytes) until a second passes without a message, and writes "p50 p99" in µs to OUT.
static void subscribe(const char *endpoint, long messages, int out) {
    void *context = zmq_ctx_new();
    void *socket = zmq_socket(context, ZMQ_SUB);
    int timeout = 1000;
    if (zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "", 0) != 0 || zmq_setsockopt(socket, ZMQ_RCVTIMEO, &timeout, sizeof timeout) != 0
        || zmq_connect(socket, endpoint) != 0) fail("subscriber");
    long long *delays = malloc(sizeof(long long) * messages);
    long count = 0;
    char buffer[65536];
    int started = 0;
    for (;;) {
        int size = zmq_recv(socket, buffer, sizeof buffer, 0);
        if (size < 0) {
            if (zmq_errno() == EAGAIN && !started) continue;
            break;
        }
        started = 1;
        int more = 0;
        size_t length = sizeof more;
        zmq_getsockopt(socket, ZMQ_RCVMORE, &more, &length);
        if (more || size < 8 || count == messages) continue;
        long long sent;
        memcpy(&sent, buffer, sizeof sent);
        delays[count++] = now_ns() - sent;
    }
    qsort(delays, count, sizeof *delays, compare);
    dprintf(out, "%.1f %.1f\n", count ? delays[count / 2] / 1e3 : 0.0, count ? delays[count * 99 / 100] / 1e3 : 0.0);
    exit(0);
}

// Publishes MESSAGES messages paced at RATE in groups of BATCH; returns CPU µs per message.
static double publish(void *socket, long rate, long messages, char *body, size_t size, long batch) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double before = cpu_seconds();
    for (long sent = 0; sent < messages; sent += batch) {
        sleep_until(&start, (long long)(sent * 1000000000LL / rate));
        for (long i = 0; i < batch && sent + i < messages; i++) {
            if (zmq_send(socket, "progress/course/learner", 23, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) fail("zmq_send topic");
            long long sent = now_ns();
            memcpy(body, &sent, sizeof sent);
            if (zmq_send(socket, body, size, ZMQ_DONTWAIT) < 0) fail("zmq_send body");
        }
    }
    return (cpu_seconds() - before) * 1e6 / messages;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: pub_floor RATE MESSAGES SIZE BATCH\n");
        return 2;
    }
    long rate = atol(argv[1]), messages = atol(argv[2]), batch = atol(argv[4]);
    size_t size = (size_t)atol(argv[3]);
    if (rate <= 0 || messages <= 0 || batch <= 0 || size < 8) {
        fprintf(stderr, "pub_floor: RATE, MESSAGES and BATCH must be positive, SIZE at least 8\n");
        return 2;
    }
    char *body = malloc(size);
    memset(body, 'x', size);

    void *context = zmq_ctx_new();
    void *socket = zmq_socket(context, ZMQ_PUB);
    int hwm = 100000;
    zmq_setsockopt(socket, ZMQ_SNDHWM, &hwm, sizeof hwm);
    if (zmq_bind(socket, "tcp://127.0.0.1:*") != 0) fail("zmq_bind");
    char endpoint[256];
    size_t length = sizeof endpoint;
    zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, endpoint, &length);

    double alone = publish(socket, rate, messages, body, size, batch);

    int result[2];
    if (pipe(result) != 0) fail("pipe");
    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) subscribe(endpoint, messages, result[1]);
    // Long enough for the connection and its subscription to reach the PUB socket.
    usleep(300000);
    double subscribed = publish(socket, rate, messages, body, size, batch);
    waitpid(child, NULL, 0);
    char latency[64] = "";
    ssize_t got = read(result[0], latency, sizeof latency - 1);
    if (got <= 0) fail("the subscriber's result");
    latency[got] = 0;

    printf("%.2f %.2f %s", subscribed, alone, latency);
    int linger = 0;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(socket);
    zmq_ctx_term(context);
    free(body);
    return 0;
}
