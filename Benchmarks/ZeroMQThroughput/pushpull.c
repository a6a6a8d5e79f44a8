/* The C reference for the Swift wrapper's throughput: the same PUSH→PULL exchange as
   main.swift, written directly against libzmq. Usage: pushpull COUNT SIZE */
#include <zmq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *ctx;
static char endpoint[256];
static long count;
static size_t size;

static void fail(const char *what) {
    fprintf(stderr, "pushpull: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static void *push(void *unused) {
    (void)unused;
    void *socket = zmq_socket(ctx, ZMQ_PUSH);
    if (!socket || zmq_connect(socket, endpoint) != 0) fail("connect");
    char *frame = calloc(1, size);
    for (long i = 0; i < count; i++)
        if (zmq_send(socket, frame, size, 0) < 0) fail("send");
    free(frame);
    zmq_close(socket);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: pushpull COUNT SIZE\n"); return 2; }
    count = atol(argv[1]);
    size = (size_t)atol(argv[2]);
    ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    int linger = 0;
    zmq_setsockopt(pull, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(pull, "tcp://127.0.0.1:*") != 0) fail("bind");
    size_t length = sizeof endpoint;
    zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, endpoint, &length);

    pthread_t sender;
    pthread_create(&sender, NULL, push, NULL);
    zmq_msg_t message;
    zmq_msg_init(&message);
    if (zmq_msg_recv(&message, pull, 0) < 0) fail("receive");
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 1; i < count; i++)
        if (zmq_msg_recv(&message, pull, 0) < 0) fail("receive");
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_join(sender, NULL);
    zmq_msg_close(&message);
    zmq_close(pull);
    zmq_ctx_term(ctx);

    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%.0f\n", (count - 1) / seconds);
    return 0;
}
