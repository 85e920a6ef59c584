// memcap/core/spec.cpp — parsing, binding and printing spec strings (see spec.hpp).
#include "core/spec.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace memcap {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
    return out;
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool is_value_char(char c) { return is_name_char(c) || c == '.' || c == '+'; }

/// A value that lists the candidates a race chooses from: `best:v1/v2/...`.
constexpr char kListedPrefix[] = "best:";
bool is_listed(const std::string& value) { return value.rfind(kListedPrefix, 0) == 0; }
/// The items of a listed value, split at each '/' (empty items kept, for the parser to refuse).
std::vector<std::string> listed_items(const std::string& value) {
    std::vector<std::string> out;
    const std::string rest = value.substr(sizeof kListedPrefix - 1);
    for (std::size_t start = 0;;) {
        const auto slash = rest.find('/', start);
        out.push_back(rest.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
        if (slash == std::string::npos) return out;
        start = slash + 1;
    }
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string range_text(const ParamInfo& p) {
    std::string out;
    if (std::isfinite(p.min)) out += (p.min_open ? " > " : " >= ") + format_real(p.min);
    if (std::isfinite(p.max)) out += (out.empty() ? "" : ",") + std::string(p.max_open ? " < " : " <= ") + format_real(p.max);
    return out;
}

}  // namespace

std::string format_real(double x) {
    if (x == 0.0) return "0";  // folds -0 into 0 so canonical specs compare equal
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, res.ptr);
}

double parse_real(const std::string& text, const std::string& what) {
    double value = 0.0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (!text.empty() && *first == '+') ++first;
    auto res = std::from_chars(first, last, value);
    if (text.empty() || res.ec == std::errc::invalid_argument || res.ptr != last)
        throw UsageError(what + ": " + quoted(text) + " is not a number");
    if (res.ec == std::errc::result_out_of_range || !std::isfinite(value))
        throw UsageError(what + ": " + quoted(text) + " is not a finite number");
    return value;
}

std::int64_t parse_int(const std::string& text, const std::string& what) {
    std::int64_t value = 0;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (!text.empty() && *first == '+') ++first;
    auto res = std::from_chars(first, last, value);
    if (res.ec == std::errc::result_out_of_range)
        throw UsageError(what + ": " + quoted(text) + " does not fit in 64 bits");
    if (text.empty() || res.ec != std::errc() || res.ptr != last)
        throw UsageError(what + ": " + quoted(text) + " is not an integer");
    return value;
}

std::string ParamInfo::describe() const {
    std::string kind;
    switch (type) {
        case ParamType::Real: kind = "real" + range_text(*this) + (allow_inf ? " or inf" : ""); break;
        case ParamType::Int: kind = "integer" + range_text(*this); break;
        case ParamType::Choice: kind = join(choices, "|"); break;
    }
    return key + "=" + (same_as_none.empty() ? default_value : same_as_none) + " (" + kind + (best.empty() ? "" : "; best: " + join(best, " ")) + ")" +
           (help.empty() ? "" : ": " + help);
}

ParamInfo real_param(std::string key, std::string def, std::string help, double min, bool min_open, double max,
                     bool max_open) {
    ParamInfo p;
    p.key = std::move(key);
    p.type = ParamType::Real;
    p.default_value = std::move(def);
    p.help = std::move(help);
    p.min = min;
    p.min_open = min_open;
    p.max = max;
    p.max_open = max_open;
    return p;
}

ParamInfo int_param(std::string key, std::string def, std::string help, double min, double max) {
    ParamInfo p = real_param(std::move(key), std::move(def), std::move(help), min, false, max);
    p.type = ParamType::Int;
    return p;
}

ParamInfo choice_param(std::string key, std::vector<std::string> choices, std::string help) {
    ParamInfo p;
    p.key = std::move(key);
    p.type = ParamType::Choice;
    p.default_value = choices.front();
    p.choices = std::move(choices);
    p.help = std::move(help);
    return p;
}

ParamInfo optional_param(ParamInfo p) {
    p.optional = true;
    p.default_value = "none";
    return p;
}

bool Spec::has(const std::string& key) const {
    for (const auto& kv : data().values)
        if (kv.first == key) return true;
    return false;
}

Spec::Spec(std::string name, std::vector<std::pair<std::string, std::string>> values) {
    auto d = std::make_shared<Data>();
    d->canonical = name;
    for (std::size_t i = 0; i < values.size(); ++i)
        d->canonical.append(i ? "," : ":").append(values[i].first).append("=").append(values[i].second);
    d->name = std::move(name), d->values = std::move(values);
    d_ = std::move(d);
}

const Spec::Data& Spec::data() const {
    static const Data empty;
    return d_ ? *d_ : empty;
}

// A bound spec's values parse (bind_spec checked them): the message naming the key is
// built only when one does not.
double Spec::real(const std::string& key) const {
    const std::string& t = text(key);
    double value = 0.0;
    const auto res = std::from_chars(t.data(), t.data() + t.size(), value);
    if (!t.empty() && t[0] != '+' && res.ec == std::errc() && res.ptr == t.data() + t.size() && std::isfinite(value))
        return value;
    if (t == "inf") return std::numeric_limits<double>::infinity();  // bound only where the parameter allows it
    return parse_real(t, data().name + ":" + key);
}

std::int64_t Spec::integer(const std::string& key) const {
    const std::string& t = text(key);
    std::int64_t value = 0;
    const auto res = std::from_chars(t.data(), t.data() + t.size(), value);
    if (!t.empty() && t[0] != '+' && res.ec == std::errc() && res.ptr == t.data() + t.size()) return value;
    return parse_int(t, data().name + ":" + key);
}

bool raced_at_best_width(const ParamInfo& p) { return !p.best.empty() && p.type == ParamType::Real && !p.optional; }

std::vector<std::string> Spec::best_keys() const {
    std::vector<std::string> out;
    for (const auto& kv : data().values)
        if (kv.second == "best" || is_listed(kv.second)) out.push_back(kv.first);
    return out;
}

std::vector<std::string> Spec::candidates(const std::string& key, const ParamInfo& info) const {
    const std::string& t = text(key);
    return is_listed(t) ? listed_items(t) : info.best;
}

const std::string& Spec::text(const std::string& key) const {
    for (const auto& kv : data().values)
        if (kv.first == key) return kv.second;
    throw std::logic_error("spec " + data().name + " has no parameter '" + key + "'");  // a bug, not bad input
}

RawSpec split_spec(const std::string& text, const std::string& kind) {
    const std::string where = kind + " spec " + quoted(text);
    RawSpec raw;
    const auto colon = text.find(':');
    raw.name = text.substr(0, colon);
    if (raw.name.empty()) throw UsageError(where + ": missing " + kind + " name before ':'");
    if (!std::all_of(raw.name.begin(), raw.name.end(), is_name_char))
        throw UsageError(where + ": name " + quoted(raw.name) + " may use only letters, digits, '_' and '-'");
    if (colon == std::string::npos) return raw;

    const std::string rest = text.substr(colon + 1);
    if (rest.empty()) throw UsageError(where + ": nothing after ':' (write key=value pairs or drop the ':')");
    std::set<std::string> seen;
    std::size_t start = 0;
    while (true) {
        const auto comma = rest.find(',', start);
        const std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) throw UsageError(where + ": empty key=value pair (stray ',')");
        const auto eq = item.find('=');
        if (eq == std::string::npos) throw UsageError(where + ": " + quoted(item) + " is not key=value");
        std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        if (key.empty()) throw UsageError(where + ": missing key before '=' in " + quoted(item));
        if (value.empty()) throw UsageError(where + ": missing value for key " + quoted(key));
        if (!std::all_of(key.begin(), key.end(), is_name_char))
            throw UsageError(where + ": key " + quoted(key) + " may use only letters, digits, '_' and '-'");
        const std::string plain = is_listed(value) ? value.substr(sizeof kListedPrefix - 1) : value;
        if (!std::all_of(plain.begin(), plain.end(), [&](char c) { return is_value_char(c) || (c == '/' && plain != value); }))
            throw UsageError(where + ": value " + quoted(value) + " of key " + quoted(key) + " has a character outside [A-Za-z0-9_.+-]" +
                             (plain != value ? " (candidates are separated by '/')" : ""));
        if (!seen.insert(key).second) throw UsageError(where + ": key " + quoted(key) + " given twice");
        raw.pairs.emplace_back(std::move(key), std::move(value));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return raw;
}

Spec bind_spec(const Schema& schema, const RawSpec& raw) {
    std::vector<std::string> accepted;
    for (const auto& p : schema.params) accepted.push_back(p.key);
    for (const auto& kv : raw.pairs) {
        if (std::find(accepted.begin(), accepted.end(), kv.first) == accepted.end())
            throw UsageError(schema.kind + " '" + schema.name + "': unknown key " + quoted(kv.first) + " (accepted: " +
                             (accepted.empty() ? std::string("none") : join(accepted, ", ")) + ")");
    }
    std::vector<std::pair<std::string, std::string>> values;
    for (const auto& p : schema.params) {
        std::string value = p.default_value;
        for (const auto& kv : raw.pairs)
            if (kv.first == p.key) value = kv.second;
        const std::string what = schema.kind + " '" + schema.name + "': " + p.key;
        if (p.optional && value == "none") continue;  // left out: no value, omitted from the canonical form
        // One value checked against the parameter's type and range, and put in canonical form.
        const auto checked = [&](std::string v) {
            if (p.type == ParamType::Choice) {
                if (std::find(p.choices.begin(), p.choices.end(), v) == p.choices.end())
                    throw UsageError(what + "=" + v + " is not one of " + join(p.choices, ", "));
                return v;
            }
            double x;
            if (p.type == ParamType::Int) {
                x = static_cast<double>(parse_int(v, what));
                v = std::to_string(parse_int(v, what));
            } else if (p.allow_inf && v == "inf") {
                x = std::numeric_limits<double>::infinity();
            } else {
                x = parse_real(v, what);
                v = format_real(x);
            }
            const bool low = p.min_open ? !(x > p.min) : !(x >= p.min);
            const bool high = p.max_open ? !(x < p.max) : !(x <= p.max);
            if (low || high) throw UsageError(what + "=" + v + " is out of range (must be" + range_text(p) + ")");
            return v;
        };
        if (value == "best") {
            if (p.best.empty())
                throw UsageError(what + "=best: this parameter has no candidates to choose from (give a value, "
                                        "or list them: " + p.key + "=best:a/b)");
        } else if (is_listed(value)) {  // the race's candidates, as given: best:v1/v2/...
            std::vector<std::string> listed;
            for (const auto& item : listed_items(value)) {
                if (item.empty()) throw UsageError(what + "=" + value + ": an empty candidate (write best:a/b/c)");
                const std::string v = checked(item);
                if (std::find(listed.begin(), listed.end(), v) != listed.end())
                    throw UsageError(what + "=" + value + ": candidate " + quoted(v) + " listed twice");
                listed.push_back(v);
            }
            value = kListedPrefix + join(listed, "/");
        } else {
            value = checked(value);
            // The value that means "left out" (heads=1, slope=0, precision=fp32), however it is written
            // (heads=01, slope=0.0, slope=-0), is left out too, so every spelling has one canonical form.
            if (p.optional && !p.same_as_none.empty() && value == checked(p.same_as_none)) continue;
        }
        values.emplace_back(p.key, value);
    }
    return Spec(schema.name, std::move(values));
}

}  // namespace memcap
