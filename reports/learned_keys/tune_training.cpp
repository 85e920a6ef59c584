// tune_training.cpp — keys=learned's training settings on tuning seeds (docs/learned-keys.md).
// Runs one cell spec on tuning seeds 2^40 + 0..S-1 (never scored) and prints the mean accuracy.
// Not part of the build; from the repository root, after building ./build:
//   g++ -DEIGEN_DONT_PARALLELIZE -I. -Ibuild/generated -isystem /usr/include/eigen3 -O2 -march=native \
//       -ffp-contract=off -fopenmp -std=c++17 reports/learned_keys/tune_training.cpp -o tune \
//       build/libmemcap_lib.a -lboost_program_options -lfftw3f -L/usr/lib/x86_64-linux-gnu/openmpi/lib \
//       -lmpi_cxx -lmpi -ldl
//   ./tune linear assoc_recall:vocab=256,keys=learned,lr=0.01,temp=0.1 4096 64 256 10
// arguments: memory task budget(0 = natural) d n seeds
#include "harness/eval/cell.hpp"
#include "harness/exec/tuning.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"
#include "harness/eval/readout.hpp"
#include <cstdio>
#include <cstdlib>
using namespace memcap;
int main(int argc, char** argv) {
    // memory task budget(0=natural) d n seeds
    std::string mem = argv[1], task = argv[2];
    long b = atol(argv[3]); int d = atoi(argv[4]); long n = atol(argv[5]); int seeds = atoi(argv[6]);
    double sum = 0; int ok = 0;
    for (int s = 0; s < seeds; ++s) {
        auto c = make_cell(parse_memory_spec(mem), parse_task_spec(task), parse_readout_spec("native"),
                           b ? std::optional<std::int64_t>(b) : std::nullopt, d, n, kTuningSeedBase + s);
        auto r = run_cell(c);
        if (!r.ok) { printf("error %s\n", r.message.c_str()); continue; }
        sum += double(r.slots[0].correct) / r.slots[0].queries; ++ok;
    }
    printf("%s %s b=%ld d=%d n=%ld: %.4f (%d seeds)\n", mem.c_str(), task.c_str(), b, d, n, sum / ok, ok);
}
