// memcap/harness/exec/mpi_shim.cpp — the module memcap loads for an MPI sweep (mpi_ops.h).
#include "harness/exec/mpi_ops.h"

#include <mpi.h>

namespace {

int init_funneled(int* rank, int* size) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return provided >= MPI_THREAD_FUNNELED;
}
void abort_world(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
void finalize() { MPI_Finalize(); }
void max_int(int* value) { MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); }
void sum_doubles(double* values, int count) {
    MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
int iprobe_any(int tag, int* source) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
    if (flag) *source = st.MPI_SOURCE;
    return flag;
}
int probe(int source, int tag, int* from) {
    MPI_Status st;
    MPI_Probe(source, tag, MPI_COMM_WORLD, &st);
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    *from = st.MPI_SOURCE;
    return bytes;
}
void recv(void* buffer, int bytes, int source, int tag) {
    MPI_Recv(buffer, bytes, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
void send(const void* buffer, int bytes, int dest, int tag) {
    MPI_Send(buffer, bytes, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

constexpr MemcapMpiOps kOps{MEMCAP_MPI_OPS_VERSION, init_funneled, abort_world, finalize, max_int, sum_doubles,
                            iprobe_any, probe, recv, send};

}  // namespace

extern "C" __attribute__((visibility("default"))) const MemcapMpiOps* memcap_mpi_ops() { return &kOps; }
