/* memcap/harness/exec/mpi_ops.h — the MPI calls memcap makes, behind plain C functions.
 *
 * memcap_mpi (harness/exec/mpi_shim.cpp, a module linked against MPI) defines them;
 * harness/exec/mpi.cpp loads that module only when the process was started by an MPI
 * launcher, so every other start of memcap skips loading MPI's libraries (about 0.6 ms of
 * each start on a 2-core EPYC: `memcap --version` 1.66 ms with them, 1.05 ms without). */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

struct MemcapMpiOps {
    int version; /* MEMCAP_MPI_OPS_VERSION */
    /* MPI_Init_thread(MPI_THREAD_FUNNELED); the rank and size in MPI_COMM_WORLD; returns
     * whether FUNNELED was provided */
    int (*init_funneled)(int* rank, int* size);
    void (*abort_world)(int code);
    void (*finalize)(void);
    void (*max_int)(int* value);                  /* in place, over every rank */
    void (*sum_doubles)(double* values, int count); /* in place, over every rank */
    int (*iprobe_any)(int tag, int* source);      /* 1 when a message with `tag` waits */
    int (*probe)(int source, int tag, int* from); /* waits for one; its size in bytes */
    void (*recv)(void* buffer, int bytes, int source, int tag);
    void (*send)(const void* buffer, int bytes, int dest, int tag);
};

#define MEMCAP_MPI_OPS_VERSION 1
#define MEMCAP_MPI_OPS_SYMBOL "memcap_mpi_ops"
typedef const struct MemcapMpiOps* (*MemcapMpiOpsFn)(void);

#ifdef __cplusplus
}
#endif
