// memcap/memories/sliding_window/entry.cpp — sliding-window attention: the softmax cache at a
// budget under its published name.
//
// The same memory as `softmax` (memories/softmax/softmax_cache.hpp): a budget of B floats holds
// the last floor(B / (d_k + d_v)) pairs (FIFO eviction), which is a window of that many writes.
// Every parameter, the sizing, the cost model, the backward pass and the recall model are
// softmax's.
// Source:       Beltagy, Peters & Cohan 2020 (Longformer); Child et al. 2019.
#include "memories/registry.hpp"

namespace memcap {

MemoryEntry softmax_entry();

MemoryEntry sliding_window_entry() {
    MemoryEntry e = softmax_entry();
    e.name = "sliding_window";
    e.description = "sliding-window attention: the softmax cache holding the last floor(B/(d_k+d_v)) pairs";
    e.paper = "Beltagy et al. 2020; Child et al. 2019";
    // How the reports name it (memcap list --json).
    e.published = "sliding-window attention";
    e.cost_growth = "O((n + q·s)·d), s = min(n, B/2d) slots";
    e.table_name = "";
    e.plain_name = "sliding window";
    e.same_as = "softmax";
    e.article = true;
    e.cache = true;
    // zoology/mixers/slide_attn.py, SlidingAttn.state_size: block_size * d_model * 2 (the window's keys and values)
    e.zoology = ZoologyCount{"2 x d_model x block_size (zoology/mixers/slide_attn.py); d_model = d_k = d_v, block_size = the "
                             "window of pairs held: equal to memcap's without a null slot (whose row memcap counts)",
                             e.zoology->floats};
    return e;
}

}  // namespace memcap
