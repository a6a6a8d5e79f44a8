#ifndef LYCEUM_CZMQ_SHIM_H
#define LYCEUM_CZMQ_SHIM_H

#include <zmq.h>
#include <errno.h>

// libzmq's own error numbers are macros over ZMQ_HAUSNUMERO, which Swift cannot import;
// these return them as values.
static inline int czmq_eterm(void) { return ETERM; }
static inline int czmq_efsm(void) { return EFSM; }
static inline int czmq_emthread(void) { return EMTHREAD; }
static inline int czmq_enocompatproto(void) { return ENOCOMPATPROTO; }

#endif
