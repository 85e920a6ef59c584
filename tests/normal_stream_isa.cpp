// One build of core/normal_stream.cpp per instruction set (tests/CMakeLists.txt:
// baseline x86-64 and -march=native): every kernel of each (the loops compiled
// for the build's target, for AVX2 and for AVX-512, where the CPU has them) must
// give the same, pinned hashes, so the normal stream's bits do not depend on how
// the loops were vectorised.
// The fills start mid-block, cross 1024-normal batches and the block counter's
// carry into its second word, and scale by sd in double.
#include "core/normal_stream.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

template <class T>
std::uint64_t fnv1a(const std::vector<T>& v) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const T& x : v) {
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &x, sizeof(T));
        for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
    }
    return h;
}

}  // namespace

int main() {
    using namespace memcap;
    namespace nd = memcap::normal_detail;
    const std::uint64_t pinned[3] = {0x95266c338de6b889ULL, 0xa8cd82da86abb26dULL, 0xd6a53d4d6ca7e3a9ULL};
    const char* names[3] = {"build_target", "avx2", "avx512"};
    int bad = 0;
    for (nd::Kernel k : {nd::Kernel::build_target, nd::Kernel::avx2, nd::Kernel::avx512}) {
        const char* name = names[static_cast<int>(k)];
        if (!nd::kernel_available(k)) {
            std::printf("%-12s not on this CPU\n", name);
            continue;
        }
        std::vector<float> f(65536);
        nd::fill_with(k, 0x0123456789abcdefULL, 0, f.data(), f.size());
        std::vector<float> g(100003);
        nd::fill_with(k, 0xfedcba9876543210ULL, 4 * ((std::uint64_t{1} << 32) - 5) + 2, g.data(), g.size(), 0.37);
        std::vector<double> d(100003);
        nd::fill_with(k, 0xfedcba9876543210ULL, 4 * ((std::uint64_t{1} << 32) - 5) + 2, d.data(), d.size(), 0.37);
        const std::uint64_t got[3] = {fnv1a(f), fnv1a(g), fnv1a(d)};
        for (int i = 0; i < 3; ++i) {
            std::printf("%-12s %016llx%s\n", name, static_cast<unsigned long long>(got[i]),
                        got[i] == pinned[i] ? "" : "  (differs from the pinned hash)");
            bad += got[i] != pinned[i];
        }
    }
    return bad == 0 ? 0 : 1;
}
