// memcap/tasks/registry.cpp — the one table of tasks.
#include "tasks/registry.hpp"

#include "core/error.hpp"
#include "tasks/assoc_recall.hpp"
#include "tasks/chain_recall.hpp"
#include "tasks/mqar.hpp"
#include "tasks/selective_copying.hpp"
#include "tasks/sequence_recall.hpp"
#include "tasks/stream_recall.hpp"

namespace memcap {
namespace {

std::vector<TaskEntry> build_task_registry() {
    std::vector<TaskEntry> tasks = {
        {"assoc_recall", "associative recall: write n random (key, value) pairs, query stored keys",
         {int_param("queries", "32", "reads per episode, targets drawn with replacement", 1, 1 << 20),
          real_param("noise", "0", "query noise sigma per entry, then renormalised", 0.0),
          real_param("cosine", "1", "query noise set by the expected query-key cosine c at every width: sigma = sqrt((1/c^2 - 1)/d); 1 = none", 0.0, true, 1.0),
          choice_param("control",
                       {"none", "shuffled_query", "key_shuffle", "value_shuffle", "paired_permutation", "key_collision",
                        "structural_mask"},
                       "a control or intervention (see tasks/assoc_recall.hpp)"),
          optional_param(real_param("absent", "", "fraction of queries asking for a key never written (the readout must abstain); none: every query is present", 0.0, false, 1.0, true)),
          int_param("vocab", "0", "V: keys are n distinct symbols of V, one table row each (V >= n); 0 = fresh Gaussian keys every episode", 0, 1 << 24),
          choice_param("keys", {"random", "frame", "learned"},
                       "the symbols' key table (vocab >= 1): Gaussian per seed, a unit-norm tight frame (Welch bound; orthonormal for V <= d), or trained through the memory (Adam on training episodes)"),
          int_param("steps", "1000", "keys=learned: Adam steps, one training episode each", 1, 1e7),
          real_param("lr", "0.01", "keys=learned: Adam learning rate", 0.0, true, 1.0),
          real_param("temp", "0.1", "keys=learned: temperature of the cross-entropy over the n candidates", 0.0, true),
          optional_param(int_param("passes", "", "p: the n pairs are written p times in order before the queries; none: once", 1, 1 << 16))},
         "number of stored pairs", "essay 004 Part 3",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<AssocRecall>(s); }},
        {"recent_recall", "the horizon: ratio*n pairs written, queries ask for the last n (the window); slot = lag bucket (its largest lag)",
         {int_param("ratio", "8", "T = ratio * n pairs are written; every value written is a candidate", 1, 1 << 20),
          int_param("buckets", "8", "lag buckets of the window (capped at n); query i asks bucket i mod buckets", 1, 1 << 20),
          int_param("queries", "64", "reads per episode, stratified over the buckets", 1, 1 << 20),
          real_param("noise", "0", "query noise sigma per entry, then renormalised", 0.0),
          real_param("cosine", "1", "query noise set by the expected query-key cosine c: sigma = sqrt((1/c^2 - 1)/d); 1 = none", 0.0, true, 1.0)},
         "window W (lags asked)", "beyond the essays: Part 1's recent-against-distant trade on recall",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<RecentRecall>(s); }},
        {"overwrite_recall", "overwrites: n pairs, a fraction of the keys written again with fresh values, each after its first write; slot 0 = untouched keys, 1 = rewritten (latest value right)",
         {real_param("rewrite", "0.25", "fraction of the n keys written again (max(1, round(rewrite*n)))", 0.0, true, 1.0),
          choice_param("order", {"interleaved", "last"},
                       "interleaved: each rewrite at a uniformly random place after its key's first write; last: every rewrite "
                       "after the n first writes, targets drawn with replacement, one episode a seed (the earlier task)"),
          int_param("rewritten", "16", "interleaved: rewritten keys read per seed, at least (each episode reads its rewritten keys in "
                                       "turn; a seed scores as many episodes as that takes)", 1, 1 << 20),
          int_param("queries", "64", "reads per episode: even ones ask untouched keys, odd ones rewritten keys", 1, 1 << 20),
          real_param("noise", "0", "query noise sigma per entry, then renormalised", 0.0),
          real_param("cosine", "1", "query noise set by the expected query-key cosine c: sigma = sqrt((1/c^2 - 1)/d); 1 = none", 0.0, true, 1.0)},
         "number of distinct keys", "beyond the essays: essay 000's key collision; Zoology's key overwrites",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<OverwriteRecall>(s); }},
        {"salient_recall", "salient pairs among distractors: n marked pairs among distractors*n pairs marked e0 + u; only marked keys are asked; gate=all: every memory skips the distractors",
         {int_param("distractors", "3", "distractor pairs per marked pair, at random positions", 0, 1 << 16),
          int_param("queries", "32", "reads per episode, marked targets drawn with replacement", 1, 1 << 20),
          real_param("noise", "0", "query noise sigma per entry, then renormalised", 0.0),
          real_param("cosine", "1", "query noise set by the expected query-key cosine c: sigma = sqrt((1/c^2 - 1)/d); 1 = none", 0.0, true, 1.0),
          optional_param(choice_param("gate", {"none", "all"},
                                      "the task's write gate, the same for every memory: none = every pair is written (no memory reads the mark); all = the distractors are skipped before any memory writes (the n marked pairs only)"))},
         "number of marked pairs", "beyond the essays: selection (Gu & Dao 2023) on associative recall",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<SalientRecall>(s); }},
        {"chain_recall", "chained lookups: n items stored as a cycle item -> next item; each hop's read is the next query (slot = hop)",
         {int_param("hops", "4", "reads per chain, each scored (at most n - 1)", 1, 1 << 20),
          choice_param("cleanup", {"nearest", "none"},
                       "nearest: each read is replaced by its nearest stored item before the next hop; none: the read, normalised"),
          int_param("queries", "32", "chains per episode, start items drawn with replacement", 1, 1 << 20)},
         "number of stored items (pairs)", "essay 004, what the instrument does not show",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<ChainRecall>(s); }},
        {"lag_recall", "lag recall: a stream of n tokens, recall the token k steps back (slot = lag k)",
         {int_param("vocab", "16", "vocabulary size (chance 1/vocab)", 1, 1 << 20),
          int_param("lags", "60", "lags 1..lags are queried (capped at n)", 1, 1 << 30),
          int_param("episodes", "1000", "scored episodes per seed", 1, 1e8)},
         "stream length T (essay: 80)", "essay 004 Part 1",
         [](const Spec& s) -> std::unique_ptr<Task> {
             return std::make_unique<SequenceRecall>(s, SequenceRecall::Mode::Lag);
         }},
        {"copying", "copying: a stream of n tokens, recall the token at every position (slot = position)",
         {int_param("vocab", "16", "vocabulary size (chance 1/vocab)", 1, 1 << 20),
          int_param("episodes", "1000", "scored episodes per seed", 1, 1e8)},
         "stream length L", "essay 004 Part 1",
         [](const Spec& s) -> std::unique_ptr<Task> {
             return std::make_unique<SequenceRecall>(s, SequenceRecall::Mode::Copy);
         }},
        {"selective_copying", "selective copying: content tokens among blanks, recall the content in order",
         {int_param("vocab", "16", "content vocabulary (answers: vocab + the blank)", 1, 1 << 20),
          int_param("content", "16", "content tokens per stream (<= n)", 1, 1 << 30),
          int_param("episodes", "1000", "scored episodes per seed", 1, 1e8)},
         "stream length L", "Gu & Dao 2023 (Mamba) section 3.1",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<SelectiveCopying>(s); }},
        {"mqar", "multi-query associative recall as zoology poses it: every token of a stream of pairs, power-law queries and filler written, each query read as it arrives",
         {int_param("vocab", "8192", "V: key symbols 1..V/2-1, value symbols V/2..V-1 (the answer set); V >= 2n + 2", 4, 1 << 24),
          int_param("length", "256", "T: tokens in the stream (even, >= 4n): 2n of pairs, then the query region", 2, 1 << 24),
          real_param("alpha", "0.01", "power-law exponent of the query gaps: P(gap g) ~ alpha (g+1)^(alpha-1)", 0.0, true),
          optional_param(int_param("queries", "", "keys asked per stream, a random subset of the n (<= n); none: every key once", 1, 1 << 24)),
          int_param("episodes", "64", "streams scored per seed", 1, 1e8),
          optional_param(int_param("updates", "", "forgetting_mqar: keys written again with a new value after the pairs (<= n; the answer is the latest); none: no key", 0, 1 << 24)),
          optional_param(int_param("key_tokens", "", "2: compositional_mqar's two-token keys (n = g^2 pairs of a g x g grid of (K1, K2); vocab in thirds); none: one-token keys", 2, 2))},
         "number of key-value pairs in the stream", "Arora, Eyuboglu et al. 2023 (Zoology), zoology/data/multiquery_ar.py",
         [](const Spec& s) -> std::unique_ptr<Task> { return std::make_unique<Mqar>(s); }},
    };
    // The capacity axis and the slots of the tasks whose capacity is not counted in stored pairs
    // alone (the reports read them from `memcap list --json`).
    for (auto& t : tasks) {
        if (t.name == "assoc_recall") t.pairs_limit = true;
        if (t.name == "recent_recall") t.slot_meaning = "lag bucket";
        if (t.name == "overwrite_recall") t.slot_parts = {{"0", "untouched"}, {"1", "rewritten"}};
        if (t.name == "lag_recall") t.capacity_axis = "lag", t.slot_meaning = "lag";
        if (t.name == "copying") t.capacity_axis = "L", t.slot_meaning = "position";
        if (t.name == "selective_copying") t.capacity_axis = "L", t.slot_meaning = "content position";
    }
    return tasks;
}

}  // namespace

const std::vector<TaskEntry>& task_registry() {
    static const std::vector<TaskEntry> registry = build_task_registry();
    return registry;
}

std::vector<std::string> task_names() {
    std::vector<std::string> names;
    for (const auto& e : task_registry()) names.push_back(e.name);
    return names;
}

const TaskEntry& find_task(const std::string& name) {
    for (const auto& e : task_registry())
        if (e.name == name) return e;
    std::string known;
    for (const auto& n : task_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("unknown task '" + name + "' (known: " + known + ")");
}

Spec parse_task_spec(const std::string& text) {
    const RawSpec raw = split_spec(text, "task");
    return bind_spec(find_task(raw.name).schema(), raw);
}

std::unique_ptr<Task> make_task(const Spec& spec) { return find_task(spec.name()).make(spec); }

}  // namespace memcap
