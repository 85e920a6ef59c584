// memcap/tasks/chain_recall.hpp — chained lookups: each hop's read is the next query.
//
// n items (unit random codes of width d) are stored as n pairs item_i → item_π(i),
// π a random cyclic permutation (one cycle through all n items, so a chain of
// h ≤ n − 1 hops never revisits an item and two chains never merge). A query starts
// at a random item s and follows h hops: hop 1 reads with item_s and should
// return item_π(s); hop r reads with what hop r − 1 returned and should return
// item_π^r(s). Every hop is scored (slot = hop 1 … h) against the n items, so one
// cell gives the whole compounding curve; chance is 1/n.
//
// One episode, n = 4, π = (0 → 2 → 3 → 1 → 0), hops = 2, cleanup = nearest:
//
//     write  x0 → x2,  x1 → x0,  x2 → x3,  x3 → x1
//     query  x0  → read r1, scored against x2 (slot 1);
//                  cleaned up to its nearest item, say x2;
//            x2  → read r2, scored against x3 (slot 2)
//
// Parameters:
//   hops    = 4        h ≥ 1 reads per chain, at most n − 1
//   cleanup = nearest  nearest: each read is replaced by its nearest stored item before
//                      it is asked (a system with an item memory); a wrong hop then
//                      asks for a wrong but clean item.
//                      none: the read itself, normalised, is the next query, so a hop's
//                      crosstalk travels into the next as query noise.
//   queries = 32       chains per episode (start items drawn with replacement)
//
// With cleanup, hop r's correctness is hop 1's at another item, so p_r ≈ p_1^r
// (a wrong item leads back onto the chain only by a second error that lands on
// exactly the right item: about (1 − p_1)/(n − 1) per hop; memories/theory.hpp,
// chain_cleanup_accuracy). Only the memory's own read can be chained: the probe,
// and so memories without a native read (the rotation RNN), are refused.
#pragma once

#include "tasks/task.hpp"

namespace memcap {

class ChainRecall final : public Task {
public:
    explicit ChainRecall(Spec spec);

    double chance(const TaskCell& cell) const override { return 1.0 / static_cast<double>(cell.n); }
    bool has_slots() const override { return true; }
    int hops() const override { return hops_; }
    void next_queries(const Episode& episode, ConstMatRef reads, RowMat& queries) const override;
    std::int64_t peak_bytes(const TaskCell& cell) const override;
    /// Each round reads the `queries` chains at once (one read_batch of that many rows).
    std::int64_t queries_per_episode(const TaskCell&) const override { return queries_; }

protected:
    /// hops ≤ n − 1 (a chain visits hops + 1 distinct items); the n items must differ (d ≥ 2).
    void check_cell(const TaskCell& cell) const override;
    void fill(const TaskCell& cell, Split split, std::int64_t index, std::uint64_t held, Episode& e) const override;

private:
    int hops_;
    bool cleanup_;
    std::int64_t queries_;
};

}  // namespace memcap
