// nearest_key — a memcap backend built outside memcap's tree, loaded as a plugin.
//
// Stores:       the written (key, value) pairs, up to C = floor(B / (d_k + d_v)) of
//               them, the oldest evicted first (FIFO); unbounded without a budget.
// Write:        append (k, v).
// Read:         the value of the stored key with the largest dot product with the
//               query (hard attention: softmax attention as beta -> infinity); ties
//               go to the earlier slot; the zero vector when nothing is stored.
// state_floats: (stored pairs) x (d_k + d_v) <= B.
// Parameters:   none. Minimum budget: d_k + d_v (one pair).
// Traits:       native read; writes commute at the natural size (no eviction);
//               cannot hide a pair from a read.
#include <memcap/memories/plugin.hpp>

#include <algorithm>

namespace {

using namespace memcap;

class NearestKey final : public Memory {
public:
    static std::int64_t capacity(const MemoryShape& s) {  // pairs held at most; -1 = unbounded
        return s.budget_floats ? *s.budget_floats / (s.d_key + s.d_value) : -1;
    }
    explicit NearestKey(const MemoryShape& s) : d_key_(s.d_key), d_value_(s.d_value), capacity_(capacity(s)) {}

    void reset() override { rows_.resize(0, d_key_ + d_value_), next_ = 0; }
    void write(ConstVecRef key, ConstVecRef value) override {
        Eigen::Index slot = rows_.rows();
        if (capacity_ < 0 || slot < capacity_) rows_.conservativeResize(slot + 1, d_key_ + d_value_);
        else slot = next_, next_ = (next_ + 1) % capacity_;
        rows_.row(slot) << key.transpose(), value.transpose();
    }
    void read(ConstVecRef query, VecRef out) const override {
        if (rows_.rows() == 0) {
            out.setZero();
            return;
        }
        const Vec scores = rows_.leftCols(d_key_) * query;
        Eigen::Index best = 0;
        scores.maxCoeff(&best);  // the first maximum
        out = rows_.row(best).tail(d_value_).transpose();
    }
    std::int64_t state_floats() const override { return rows_.size(); }
    ConstStateView state() const override { return ConstStateView(rows_.data(), rows_.size()); }

private:
    int d_key_, d_value_;
    std::int64_t capacity_;
    RowMat rows_ = RowMat(0, d_key_ + d_value_);  // one row [k | v] per stored pair
    Eigen::Index next_ = 0;                       // the oldest slot, once full
};

MemoryEntry nearest_key_entry() {
    MemoryEntry e;
    e.name = "nearest_key";
    e.description = "hard attention over a FIFO key-value cache: the value of the best-matching key (plugin)";
    e.state_formula = "(stored pairs) x (d_k + d_v), at most floor(B / (d_k + d_v)) pairs; unbounded without a budget";
    e.paper = "softmax attention in the limit beta -> infinity";
    e.size = [](const Spec&, const MemoryShape& s) {
        MemorySize m;
        m.dims = {{"pairs", NearestKey::capacity(s)}};
        m.floats_per_write = s.d_key + s.d_value;
        m.state_floats = m.dims[0].second < 0 ? -1 : m.dims[0].second * m.floats_per_write;
        m.min_budget = m.floats_per_write;
        return m;
    };
    e.make = [](const Spec&, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
        return std::make_unique<NearestKey>(s);
    };
    e.order_free = true;  // at the natural size nothing is evicted, and the best match does not depend on order
    return e;
}

}  // namespace

// Called once by the loader (memcap run --plugin, a sweep's `plugins =`, memcap.load_plugin).
MEMCAP_PLUGIN { memcap::register_memory(nearest_key_entry()); }
