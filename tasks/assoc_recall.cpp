// memcap/tasks/assoc_recall.cpp — see assoc_recall.hpp.
#include "tasks/assoc_recall.hpp"

#include "core/fft.hpp"
#include "core/rng.hpp"
#include "tasks/spectral_codes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace memcap {

AssocRecall::AssocRecall(Spec spec)
    : Task(std::move(spec)), queries_(this->spec().integer("queries")), passes_(this->spec().has("passes") ? this->spec().integer("passes") : 1), noise_(this->spec().real("noise")),
      cosine_(this->spec().real("cosine")), control_(this->spec().text("control")),
      absent_(this->spec().has("absent") ? this->spec().real("absent") : 0.0),
      vocab_(this->spec().integer("vocab")), keys_(this->spec().text("keys")), steps_(this->spec().integer("steps")),
      lr_(this->spec().real("lr")), temp_(this->spec().real("temp")) {}

std::int64_t AssocRecall::absent_count() const { return std::llround(absent_ * static_cast<double>(queries_)); }

RowMat tight_frame(std::int64_t count, int d) {
    RowMat f = RowMat::Zero(count, d);
    if (count <= d) {
        for (std::int64_t i = 0; i < count; ++i) f(i, i) = 1.0f;
        return f;
    }
    // ⌊d/2⌋ distinct frequencies of 1 .. ⌈count/2⌉ − 1 (never 0 or count/2, and no two
    // summing to count): the first of a shuffle drawn from a fixed stream
    const int pairs = d / 2;
    const bool odd = d % 2 == 1;
    std::vector<std::int64_t> freq(static_cast<std::size_t>((count + 1) / 2 - 1));
    for (std::size_t i = 0; i < freq.size(); ++i) freq[i] = static_cast<std::int64_t>(i) + 1;
    Rng rng = Rng::stream("assoc_recall/frame", count, d);
    for (std::size_t i = 0; i < static_cast<std::size_t>(pairs); ++i)
        std::swap(freq[i], freq[i + static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(freq.size() - i)))]);
    const double scale = std::sqrt((odd ? (d - 1.0) / d : 1.0) * 2.0 / (2.0 * pairs)), pi = std::acos(-1.0);
    for (std::int64_t j = 0; j < count; ++j) {
        for (int k = 0; k < pairs; ++k) {
            // (j k) mod count keeps the angle exact for large j k
            const double angle = 2.0 * pi * static_cast<double>((j * freq[static_cast<std::size_t>(k)]) % count) /
                                 static_cast<double>(count);
            f(j, 2 * k) = static_cast<float>(scale * std::cos(angle));
            f(j, 2 * k + 1) = static_cast<float>(scale * std::sin(angle));
        }
        if (odd) f(j, d - 1) = static_cast<float>(std::sqrt(1.0 / d));
    }
    return f;
}

std::optional<KeyTraining> AssocRecall::key_training() const {
    if (keys_ != "learned") return std::nullopt;
    return KeyTraining{vocab_, steps_, lr_, temp_};
}

RowMat AssocRecall::initial_key_table(const TaskCell& c) const {
    if (vocab_ < 1) throw std::logic_error("assoc_recall: a key table needs vocab >= 1");
    if (keys_ == "frame") return tight_frame(vocab_, c.d);
    // random, and learned's starting point: one Gaussian row per symbol, per seed
    Rng rng = Rng::stream("assoc_recall/vocab", vocab_, c.d, c.seed);
    RowMat t(vocab_, c.d);
    rng.fill_normal(t);
    return t;
}

void AssocRecall::set_key_table(const TaskCell& c, const RowMat& table) {
    if (keys_ != "learned") throw std::logic_error("assoc_recall: only keys=learned takes a key table");
    if (table.rows() != vocab_ || table.cols() != c.d)
        throw std::invalid_argument("assoc_recall: the key table must be vocab x d");
    table_ = table;
    normalise_rows(table_);
    table_cell_ = c;
}

const RowMat& AssocRecall::unit_table(const TaskCell& c) const {
    if (table_cell_.n == c.n && table_cell_.d == c.d && table_cell_.seed == c.seed) return table_;
    if (keys_ == "learned")
        throw std::logic_error("assoc_recall: keys=learned needs its trained table installed (set_key_table) first");
    table_ = initial_key_table(c);
    normalise_rows(table_);
    table_cell_ = c;
    return table_;
}

double AssocRecall::sigma(const TaskCell& c) const {
    return query_sigma(noise_, cosine_, c.d);
}

void AssocRecall::check_cell(const TaskCell& c) const {
    refuse_two_noises(noise_, cosine_);
    if (absent_ > 0.0) {
        if (control_ != "none" && control_ != "paired_permutation")
            refuse("absent", format_real(absent_), "cannot be combined with control=" + control_ +
                   " (its queries or targets are not those of stored keys); use control=none or paired_permutation");
        if (absent_count() < 1 || absent_count() > queries_ - 1)
            refuse("absent", format_real(absent_), "gives " + std::to_string(absent_count()) + " absent of queries=" +
                   std::to_string(queries_) + "; it must leave at least one absent and one present query");
    }
    if (passes_ > 1 && keys_ == "learned")
        refuse("passes", std::to_string(passes_), "cannot be combined with keys=learned (training writes each key once)");
    if (passes_ > 1 && control_ == "structural_mask")
        refuse("passes", std::to_string(passes_), "cannot be combined with control=structural_mask (a read hides one written pair, and each pair is written passes times)");
    if (writes_per_episode(c) > std::numeric_limits<int>::max())
        refuse("passes", std::to_string(passes_), "makes " + std::to_string(writes_per_episode(c)) + " writes an episode with n=" +
               std::to_string(c.n) + ", more than an int indexes");
    require_distinct_codes(c, "n=" + std::to_string(c.n) + " candidate values", c.n, 0);
    if (vocab_ == 0 && keys_ != "random")
        refuse("keys", keys_, "needs a vocabulary: give vocab=V with V >= n (vocab=0 draws fresh Gaussian keys)");
    if (vocab_ > 0 && vocab_ < c.n)
        refuse("vocab", std::to_string(vocab_), "is below n=" + std::to_string(c.n) +
               ": an episode's n keys are distinct symbols of the vocabulary (vocab >= n, or 0 for fresh keys)");
    if (keys_ == "learned" && control_ != "none")
        refuse("control", control_, "cannot be combined with keys=learned (the keys are trained on the task itself)");
    if (keys_ == "learned" && absent_ > 0.0)
        refuse("absent", format_real(absent_), "cannot be combined with keys=learned (training asks for every stored symbol; "
               "train on present queries, then score absent ones, is not built)");
}

std::int64_t AssocRecall::peak_bytes(const TaskCell& c) const {
    const double nd = double(c.n) * c.d, qd = double(queries_) * c.d;
    double floats = (1.0 + 2.0 * static_cast<double>(passes_)) * nd + qd;  // keys and values (each pass), candidates; queries
    floats += scoring_panel_floats(double(c.n), c.d);  // the candidates, as the readout scores them
    double ints = 3.0 * double(queries_);  // targets, slots, hidden pairs
    if (control_ == "key_shuffle" || control_ == "value_shuffle" || control_ == "paired_permutation")
        floats += 2.0 * nd, ints += 2.0 * double(c.n);  // copies of the keys and values; the order (64-bit)
    if (sigma(c) > 0.0) floats += spectral_codes(c) ? 2.0 * qd : qd;  // the noise (and, drawn as spectra, theirs)
    if (absent_ > 0.0) floats += qd, ints += double(queries_);  // the fresh codes; their places
    if (vocab_ > 0) {
        // the table; learned: also the trainer's table, gradient and Adam's two moments,
        // the reads and their gradient, and the gradients of keys and queries
        floats += double(vocab_) * c.d * (keys_ == "learned" ? 5.0 : 1.0);
        // (a training episode queries all n keys: n more queries, reads and their gradients)
        if (keys_ == "learned") floats += 2.0 * (nd + qd) + 5.0 * nd + 2.0 * double(std::max<std::int64_t>(queries_, c.n)) * c.n;
        ints += double(vocab_) + double(c.n) + double(queries_);  // symbol order, symbols, query lengths
    }
    return bytes_of(floats, ints);
}

bool AssocRecall::spectral_codes(const TaskCell& c) const { return c.d >= kSpectralWidth && vocab_ == 0; }

std::optional<SpectralEpisode> AssocRecall::spectral_episode(const TaskCell& c, Split split, std::int64_t index) const {
    if (!spectral_codes(c) || control_ != "none" || absent_ > 0.0 || passes_ > 1) return std::nullopt;
    check(c);
    const int sp = static_cast<int>(split);
    SpectralEpisode e;
    e.d = c.d, e.n = c.n;
    e.pairs_key = Rng::stream("assoc_recall/pairs", c.n, c.d, c.seed, sp, index).key();
    e.noise_key = Rng::stream("assoc_recall/noise", c.n, c.d, c.seed, sp, index).key();
    e.noise_sd = sigma(c);
    e.target.resize(static_cast<std::size_t>(queries_));
    Rng targets = Rng::stream("assoc_recall/targets", c.n, c.d, c.seed, sp, index);  // as fill draws them
    targets.below(c.n, e.target.data(), e.target.size());
    return e;
}

void AssocRecall::fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& e) const {
    const int sp = static_cast<int>(split);
    Rng pairs = Rng::stream("assoc_recall/pairs", c.n, c.d, c.seed, sp, index);
    e.keys.resize(c.n, c.d);
    e.values.resize(c.n, c.d);
    const bool spectral = spectral_codes(c);
    if (spectral) {  // keys and values drawn as spectra (spectral_codes.hpp), at the same stream positions
        const RealFft fft(c.d);
        std::vector<std::complex<float>> spectrum(static_cast<std::size_t>(fft.bins()));
        const float inv = 1.0f / static_cast<float>(c.d);
        for (std::int64_t i = 0; i < 2 * c.n; ++i) {
            unit_spectrum(pairs.key(), static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(c.d), c.d, spectrum.data());
            float* row = i < c.n ? e.keys.row(i).data() : e.values.row(i - c.n).data();
            fft.inverse(spectrum.data(), row);
            for (int t = 0; t < c.d; ++t) row[t] *= inv;
        }
    } else if (vocab_ == 0) {
        pairs.fill_normal(e.keys);
        normalise_rows(e.keys);
    } else {  // n distinct symbols: the first n of a partial Fisher–Yates shuffle of 0..V-1
        const RowMat& table = unit_table(c);
        Rng symbols = Rng::stream("assoc_recall/symbols", vocab_, c.n, c.d, c.seed, sp, index);
        order_.resize(static_cast<std::size_t>(vocab_));
        for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int>(i);
        e.key_symbol.resize(static_cast<std::size_t>(c.n));
        for (std::int64_t i = 0; i < c.n; ++i) {
            const std::int64_t j = i + symbols.below(vocab_ - i);
            std::swap(order_[static_cast<std::size_t>(i)], order_[static_cast<std::size_t>(j)]);
            e.key_symbol[static_cast<std::size_t>(i)] = order_[static_cast<std::size_t>(i)];
            e.keys.row(i) = table.row(order_[static_cast<std::size_t>(i)]);
        }
    }
    if (!spectral) {
        pairs.fill_normal(e.values);
        normalise_rows(e.values);
    }
    if (control_ == "key_collision")
        for (std::int64_t i = 1; i < c.n; i += 2) e.keys.row(i) = e.keys.row(i - 1);
    e.candidates = e.values;

    // A training episode of keys=learned queries every stored symbol once, in write order
    // (its gradient reaches every key it wrote); every other episode draws `queries` targets.
    const bool every_key = keys_ == "learned" && split == Split::Train;
    const std::int64_t m = every_key ? c.n : queries_;
    e.target.resize(static_cast<std::size_t>(m));
    if (every_key) {
        for (std::int64_t i = 0; i < m; ++i) e.target[static_cast<std::size_t>(i)] = static_cast<int>(i);
    } else {
        Rng targets = Rng::stream("assoc_recall/targets", c.n, c.d, c.seed, sp, index);
        targets.below(c.n, e.target.data(), e.target.size());
    }
    if (control_ == "key_collision")  // the later-written value of the two under one key
        for (auto& t : e.target) t = static_cast<int>(std::min<std::int64_t>(t | 1, c.n - 1));
    e.slot.assign(e.target.size(), -1);
    if (control_ == "structural_mask") e.hidden = e.target;  // the asked-for pair, in write order

    e.queries.resize(m, c.d);
    if (control_ == "shuffled_query") {
        Rng random = Rng::stream("assoc_recall/random_query", c.n, c.d, c.seed, sp, index);
        random.fill_normal(e.queries);
    } else {
        for (std::int64_t i = 0; i < m; ++i) e.queries.row(i) = e.keys.row(e.target[static_cast<std::size_t>(i)]);
        if (const double s = sigma(c); s > 0.0) {
            Rng noise = Rng::stream("assoc_recall/noise", c.n, c.d, c.seed, sp, index);
            RowMat z(m, c.d);
            if (spectral) {  // query q's noise: positions q·d … of the stream, as a spectrum
                const int bins = c.d / 2 + 1;
                std::vector<std::complex<float>> spectra(static_cast<std::size_t>(m) * static_cast<std::size_t>(bins));
                for (std::int64_t q = 0; q < m; ++q)
                    gaussian_spectrum(noise.key(), static_cast<std::uint64_t>(q) * static_cast<std::uint64_t>(c.d), c.d, s, 0,
                                      bins, spectra.data() + q * bins);
                spectra_to_rows(spectra.data(), m, c.d, z);
            } else {
                noise.fill_normal(z, s);
            }
            e.queries += z;
        }
    }
    if (absent_ > 0.0) {  // round(absent · queries) queries at random places ask for fresh codes
        Rng fresh = Rng::stream("assoc_recall/absent", c.n, c.d, c.seed, sp, index);
        std::vector<int> place(static_cast<std::size_t>(queries_));
        for (std::size_t i = 0; i < place.size(); ++i) place[i] = static_cast<int>(i);
        const auto k = static_cast<std::size_t>(absent_count());
        for (std::size_t i = 0; i < k; ++i)  // a partial Fisher–Yates: place[0 .. k) are the absent queries
            std::swap(place[i], place[i + static_cast<std::size_t>(fresh.below(static_cast<std::int64_t>(place.size() - i)))]);
        RowMat codes(static_cast<Eigen::Index>(k), c.d);
        fresh.fill_normal(codes);
        for (std::size_t i = 0; i < k; ++i) {
            e.queries.row(place[i]) = codes.row(static_cast<Eigen::Index>(i));
            e.target[static_cast<std::size_t>(place[i])] = -1;
        }
    }
    if (vocab_ > 0) {
        e.query_norm.resize(static_cast<std::size_t>(m));
        for (std::int64_t i = 0; i < m; ++i) e.query_norm[static_cast<std::size_t>(i)] = e.queries.row(i).norm();
    }
    normalise_rows(e.queries);

    // Interventions on what is written; queries, targets and candidates stay as they are.
    if (control_ == "key_shuffle" || control_ == "value_shuffle" || control_ == "paired_permutation") {
        Rng perm = Rng::stream("assoc_recall/permutation", c.n, c.d, c.seed, sp, index);
        std::vector<Eigen::Index> order(static_cast<std::size_t>(c.n));
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Eigen::Index>(i);
        for (std::size_t i = order.size(); i > 1; --i)  // Fisher–Yates
            std::swap(order[i - 1], order[static_cast<std::size_t>(perm.below(static_cast<std::int64_t>(i)))]);
        RowMat k = e.keys, v = e.values;
        for (std::int64_t i = 0; i < c.n; ++i) {
            const Eigen::Index j = order[static_cast<std::size_t>(i)];
            if (control_ != "value_shuffle") e.keys.row(i) = k.row(j);
            if (control_ != "key_shuffle") e.values.row(i) = v.row(j);
        }
    }
    if (passes_ > 1) {  // the context written passes times, in the same order
        e.keys.conservativeResize(passes_ * c.n, Eigen::NoChange);
        e.values.conservativeResize(passes_ * c.n, Eigen::NoChange);
        for (std::int64_t p = 1; p < passes_; ++p) {
            e.keys.middleRows(p * c.n, c.n) = e.keys.topRows(c.n);
            e.values.middleRows(p * c.n, c.n) = e.values.topRows(c.n);
        }
    }
}

}  // namespace memcap
