// memcap/core/spec.hpp — spec strings `name[:key=value,...]`.
//
// Backends and tasks are named by spec strings such as `delta:beta=0.5` or
// `assoc_recall:queries=32,noise=0.12`. One generic parser splits the text;
// a Schema (a registry entry's name and declared parameters) binds it: every
// key must be declared, every value must parse and lie in range, and every
// missing key takes its default. A parameter that declares candidates (ParamInfo::best)
// may also be given as `best` (e.g. `softmax:beta=best`): the harness then chooses
// its value on tuning seeds and binds the spec again with it; any parameter may be given the
// candidates to race as `best:v1/v2/...` (e.g. `delta:beta=best:0.005/0.01/0.02`, each checked
// as a value is). Spec::canonical() prints the name with every
// parameter in declaration order and numbers in shortest round-trip form, so
//
//     parse("delta:beta=0.50")  ->  "delta:beta=0.5"
//     parse(canonical(s)) == s  for every valid spec s.
//
// Every error is a UsageError whose one line names the bad key or value and
// lists what is accepted.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace memcap {

enum class ParamType { Real, Int, Choice };

struct ParamInfo {
    std::string key;
    ParamType type = ParamType::Real;
    std::string default_value;
    std::string help;
    double min = -std::numeric_limits<double>::infinity();
    double max = std::numeric_limits<double>::infinity();
    bool min_open = false;  // true: value must be > min (else >= min)
    bool max_open = false;  // true: value must be < max (else <= max)
    std::vector<std::string> choices;  // for ParamType::Choice
    /// Candidates tried when the value is given as `best` (chosen on tuning seeds, see
    /// harness/exec/tuning.hpp), in order of preference on ties; empty: cannot be tuned.
    std::vector<std::string> best;
    /// True: the parameter may be left out (its default is `none`): a spec without it holds
    /// no value for it (Spec::has is false) and its canonical form omits it, so adding such a
    /// parameter to a table leaves every existing canonical spec string as it was.
    bool optional = false;
    /// For an optional parameter: a value that means the same as leaving it out (a memory's
    /// `precision=fp32`). It binds as left out, so the canonical form is the same either way.
    std::string same_as_none;
    /// For a real: `inf` is accepted too (+infinity, printed `inf`), for a parameter whose
    /// limit is a distinct, exactly computed mechanism (the cache's beta=inf: a hard argmax).
    bool allow_inf = false;

    /// "beta=16 (real > 0)": the form `memcap list` prints.
    std::string describe() const;
};

/// Whether `d = best` races this parameter when the spec leaves it out (`-m delta --d best`
/// races delta's beta as `-m delta:beta=best` would): it declares candidates, takes a real
/// value (a step, a decay, a sharpness, a scale: a setting a trained model would learn) and
/// is not optional. Integer settings (a mini-batch size, gradient steps, a depth), choices
/// (a feature map, a gate) and optional ones (a null slot; the storage precision, which
/// budgets in bits race) change the memory's structure or what its state holds, and are
/// raced only when given as `best`. A value the spec gives is never raced.
bool raced_at_best_width(const ParamInfo& p);

/// Declaring parameters in a registry table: a real in [min, max] (open ends
/// when *_open), an integer in [min, max], or a choice (default: the first).
ParamInfo real_param(std::string key, std::string def, std::string help, double min,
                     bool min_open = false, double max = std::numeric_limits<double>::infinity(),
                     bool max_open = false);
ParamInfo int_param(std::string key, std::string def, std::string help, double min,
                    double max = std::numeric_limits<double>::infinity());
ParamInfo choice_param(std::string key, std::vector<std::string> choices, std::string help);
/// `p` made optional (ParamInfo::optional): its default becomes `none`, meaning left out.
ParamInfo optional_param(ParamInfo p);

/// What a spec string is checked against: a registry entry's name and parameters.
struct Schema {
    std::string kind;  // "memory" or "task", for messages
    std::string name;
    std::vector<ParamInfo> params;
};

/// A bound spec: the schema's name and one canonical value per declared parameter.
class Spec {
public:
    Spec() = default;
    Spec(std::string name, std::vector<std::pair<std::string, std::string>> values);

    const std::string& name() const { return data().name; }
    double real(const std::string& key) const;
    std::int64_t integer(const std::string& key) const;
    /// False for an optional parameter left out (ParamInfo::optional); true for every other.
    bool has(const std::string& key) const;
    const std::string& text(const std::string& key) const;
    /// Keys whose value is `best` or `best:v1/v2/...`: to be chosen on tuning seeds before the spec is used.
    std::vector<std::string> best_keys() const;
    /// The candidates a race tries for `key`: those listed (`beta=best:0.005/0.01`, canonical, in
    /// the order given), else the parameter's own (`info.best`, for `beta=best`).
    std::vector<std::string> candidates(const std::string& key, const ParamInfo& info) const;
    /// The canonical spec string: `name:k1=v1,k2=v2` (just `name` without parameters).
    /// Built once, when the spec is (a cell asks for it several times).
    std::string canonical() const { return data().canonical; }

    bool operator==(const Spec& other) const {
        return d_ == other.d_ || (data().name == other.data().name && data().values == other.data().values);
    }

private:
    /// Never changed once built, so copies of a spec share it (a cell's specs are copied
    /// from the grid to the runner to each cell's task and result).
    struct Data {
        std::string name;
        std::vector<std::pair<std::string, std::string>> values;
        std::string canonical;
    };
    std::shared_ptr<const Data> d_;  // null: the empty spec
    const Data& data() const;
};

/// The syntactic parts of a spec string, before binding to a schema.
struct RawSpec {
    std::string name;
    std::vector<std::pair<std::string, std::string>> pairs;
};

/// Splits `text` into name and key=value pairs; throws UsageError on malformed text.
RawSpec split_spec(const std::string& text, const std::string& kind);

/// Binds a raw spec to its schema: checks keys and values, fills defaults.
Spec bind_spec(const Schema& schema, const RawSpec& raw);

/// Shortest text that parses back to exactly `x` ("16", "0.5", "1e-05").
std::string format_real(double x);

/// Strict number parsing for user input: the whole string must be a finite number.
/// (Spec::real also returns +infinity for `inf`, which bind_spec lets through only for a
/// parameter that declares ParamInfo::allow_inf.)
/// `what` names the option or key in the error message.
double parse_real(const std::string& text, const std::string& what);
std::int64_t parse_int(const std::string& text, const std::string& what);

}  // namespace memcap
