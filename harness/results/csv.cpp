// memcap/harness/results/csv.cpp — see csv.hpp.
#include "harness/results/csv.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"

#include <cmath>
#include <cstdio>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace memcap {

const std::vector<Column>& cell_columns() {
    static const std::vector<Column> columns = {
        {"memory", "the memory's name (memory_spec without its parameters)", true},
        {"memory_spec", "the memory's canonical spec string"},
        {"task_spec", "the task's canonical spec string"},
        {"readout", "the readout used: native or probe:train=...,ridge=..."},
        {"budget_floats", "the budget in floats; empty = the backend's natural size"},
        {"state_floats", "numbers of state the memory held (at most the budget at fp32; as many as its bits buy below)"},
        {"state_bits", "bits of that state at the memory's precision (32 a float at fp32; integer formats' scales included)", true},
        {"param_floats", "floats of fixed parameters (projections), not state"},
        {"d", "code width: dimension of keys and values"},
        {"n", "task size: pairs, stream length or lag range"},
        {"seed", "replicate"},
        {"slot", "lag or position for tasks with slots; empty otherwise"},
        {"queries", "reads scored"},
        {"correct", "reads whose nearest candidate was the target"},
        {"accuracy_frac", "correct / queries"},
        {"chance_frac", "accuracy of a uniform guess among the candidates"},
        {"target_dist_mean", "mean Euclidean distance from the read to the right value"},
        {"target_cos_mean", "mean cosine of the read to the right value (0 for a zero read)", true},
        {"absent_queries", "queries for keys never written (assoc_recall:absent); empty for tasks without them", true},
        {"threshold", "decision threshold on the read's best candidate score, chosen on tuning seeds (accept at or above)", true},
        {"false_accept_frac", "absent queries accepted / absent queries", true},
        {"present_accept_frac", "present queries accepted / present queries", true},
        {"balanced_accuracy_frac", "(present queries accepted and right / present + absent rejected / absent) / 2", true},
        {"auc_frac", "area under the ROC curve of the decision statistic, present against absent (threshold-free)", true},
        {"tuned", "settings chosen on tuning seeds, e.g. d=64,beta=8 (d, and memory parameters given as best); empty: none"},
        {"status", "ok, or error"},
        {"message", "why the cell failed (status error); for a trained memory (train=layer), how training went"},
    };
    return columns;
}

const std::vector<Column>& summary_columns() {
    static const std::vector<Column> columns = {
        {"memory", "the memory's name (memory_spec without its parameters)", true},
        {"memory_spec", "the memory's canonical spec string"},
        {"task_spec", "the task's canonical spec string"},
        {"readout", "the readout used"},
        {"budget_floats", "the budget; empty = natural size"},
        {"state_floats", "largest state_floats over the group's seeds"},
        {"state_bits", "largest state_bits over the group's seeds", true},
        {"param_floats", "largest param_floats (fixed projections, not state) over the group's seeds", true},
        {"d", "code width"},
        {"n", "task size"},
        {"slot", "lag or position; empty for tasks without slots"},
        {"seeds", "rows in the group (one per seed)"},
        {"errors", "seeds whose cell failed"},
        {"queries", "reads scored over all seeds"},
        {"accuracy_mean_frac", "mean accuracy over seeds"},
        {"accuracy_sd_frac", "standard deviation of accuracy across seeds"},
        {"accuracy_se_frac", "standard error of the mean: max(sd, one seed's binomial sd) / sqrt(seeds that ran)"},
        {"accuracy_ci95_lo_frac", "95% t interval of the mean, lower end (clipped to 0)"},
        {"accuracy_ci95_hi_frac", "95% t interval of the mean, upper end (clipped to 1)"},
        {"chance_frac", "accuracy of a uniform guess"},
        {"target_dist_mean", "mean over seeds of target_dist_mean"},
        {"target_cos_mean", "mean over seeds of target_cos_mean", true},
        {"threshold_mean", "mean over seeds of the decision threshold (the same for every seed of a group)", true},
        {"false_accept_mean_frac", "mean false-accept rate over seeds", true},
        {"false_accept_ci95_lo_frac", "its 95% t interval, lower end (clipped to 0)", true},
        {"false_accept_ci95_hi_frac", "its 95% t interval, upper end (clipped to 1)", true},
        {"present_accept_mean_frac", "mean present-accept rate over seeds", true},
        {"balanced_accuracy_mean_frac", "mean balanced accuracy over seeds", true},
        {"balanced_accuracy_ci95_lo_frac", "its 95% t interval, lower end (clipped to 0)", true},
        {"balanced_accuracy_ci95_hi_frac", "its 95% t interval, upper end (clipped to 1)", true},
        {"auc_mean_frac", "mean area under the ROC curve over seeds", true},
        {"auc_ci95_lo_frac", "its 95% t interval, lower end (clipped to 0)", true},
        {"auc_ci95_hi_frac", "its 95% t interval, upper end (clipped to 1)", true},
        {"tuned", "settings chosen on tuning seeds, e.g. d=64,beta=8; empty: none"},
    };
    return columns;
}

std::string header_line(const std::vector<Column>& columns) {
    std::string out;
    for (const auto& c : columns) out += (out.empty() ? "" : ",") + std::string(c.name);
    return out + "\n";
}

const std::string& cell_header() {
    static const std::string header = header_line(cell_columns());
    return header;
}

CsvRecord& CsvRecord::set(std::string_view column, std::string value) {
    // Writers set columns mostly in file order: the search starts after the column set last
    // and wraps around, so a record filled in order finds each name at the first look.
    const std::size_t count = columns_->size();
    for (std::size_t step = 0; step < count; ++step) {
        const std::size_t i = (next_ + step) % count;
        // name == column, without measuring every name (strncmp stops at the first difference)
        const char* name = (*columns_)[i].name;
        if (std::strncmp(name, column.data(), column.size()) != 0 || name[column.size()] != '\0') continue;
        if (value.find_first_of(",\"\n\r") == std::string::npos) fields_[i] = std::move(value);  // as csv_field leaves it
        else fields_[i] = csv_field(value);
        next_ = i + 1;
        return *this;
    }
    throw std::logic_error("CsvRecord: no column '" + std::string(column) + "'");
}

std::string CsvRecord::line() const {
    std::size_t size = fields_.size() + 1;
    for (const auto& f : fields_) size += f.size();
    std::string out;
    out.reserve(size);
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ',';
        out += fields_[i];
    }
    out += '\n';
    return out;
}

CsvColumns::CsvColumns(const std::string& header, const std::vector<Column>& required, const std::string& file)
    : names_(split_csv_line(header)) {
    for (const auto& c : required) {
        if (c.optional) continue;
        bool found = false;
        for (const auto& n : names_) found = found || n == c.name;
        if (!found) throw UsageError(file + ": not a memcap results CSV (no column '" + c.name + "')");
    }
}

std::size_t CsvColumns::operator[](std::string_view column) const {
    for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == column) return i;
    throw std::logic_error("CsvColumns: no column '" + std::string(column) + "'");
}

namespace {

/// Appends `text` as one CSV field: quoted when it holds a comma, quote or newline (quotes
/// doubled, newlines as spaces). csv_field returns the same as a string.
void append_field(std::string& out, std::string_view text) {
    if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
        out += text;
        return;
    }
    out += '"';
    for (const char ch : text) {
        if (ch == '"') out += '"';
        out += (ch == '\n' || ch == '\r') ? ' ' : ch;
    }
    out += '"';
}

template <class Int>
void append_int(std::string& out, Int x) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, res.ptr);
}

}  // namespace

std::string cell_rows(const CellResult& r) {
    // The columns of cell_columns(), in its order, appended straight into the lines (one per
    // slot): the bytes CsvRecord would give, without a record of strings per row.
    std::string lead;  // memory … seed, and the separator after seed
    lead.reserve(r.memory_spec.size() + r.task_spec.size() + r.readout.size() + 96);
    append_field(lead, memory_name(r.memory_spec)), lead += ',';
    append_field(lead, r.memory_spec), lead += ',';
    append_field(lead, r.task_spec), lead += ',';
    append_field(lead, r.readout), lead += ',';
    if (r.budget_floats) append_int(lead, *r.budget_floats);
    lead += ',';
    if (r.ok) append_int(lead, r.state_floats), lead += ',', append_int(lead, r.state_bits), lead += ',', append_int(lead, r.param_floats);
    else lead += ",,";
    lead += ',';
    append_int(lead, r.d), lead += ',', append_int(lead, r.n), lead += ',', append_int(lead, r.seed), lead += ',';
    if (!r.ok) {  // slot … auc_frac empty, then tuned, status, message
        std::string out = lead;
        out += ",,,,,,,,,,,,,";
        append_field(out, r.tuned);
        out += ",error,";
        append_field(out, r.message);
        out += '\n';
        return out;
    }
    const std::string chance = format_real(r.chance_frac);
    std::string tail;  // absent_queries … auc_frac are per row; tuned, status, message
    tail += ',';
    append_field(tail, r.tuned);
    tail += ",ok,";
    append_field(tail, r.message);  // empty but for a trained memory (how its training went)
    tail += '\n';
    std::string out;
    out.reserve(r.slots.size() * (lead.size() + tail.size() + 96));
    for (const auto& s : r.slots) {
        const double q = static_cast<double>(s.queries);
        out += lead;
        if (s.slot >= 0) append_int(out, s.slot);
        out += ',', append_int(out, s.queries), out += ',', append_int(out, s.correct), out += ',';
        out += format_real(static_cast<double>(s.correct) / q), out += ',';
        out += chance, out += ',';
        if (!std::isnan(s.target_dist_sum)) out += format_sig(s.target_dist_sum / q);
        out += ',';
        if (!std::isnan(s.target_cos_sum)) out += format_sig(s.target_cos_sum / q);
        out += ',';
        if (r.abstention) {
            const Abstention& a = *r.abstention;
            const auto rate = [&](double x) {
                if (!std::isnan(x)) out += format_sig(x);
            };
            append_int(out, a.absent), out += ',', out += format_sig(a.threshold), out += ',';
            rate(a.false_accept), out += ',', rate(a.present_accept), out += ',', rate(a.balanced), out += ',', rate(a.auc);
        } else {
            out += ",,,,,";
        }
        out += tail;
    }
    return out;
}

std::string memory_name(const std::string& memory_spec) {
    return memory_spec.substr(0, memory_spec.find(':'));
}

std::string csv_field(const std::string& text) {
    std::string out;
    append_field(out, text);
    return out;
}

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
            else if (ch == '"') quoted = false;
            else fields.back() += ch;
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            fields.emplace_back();
        } else {
            fields.back() += ch;
        }
    }
    return fields;
}

std::string format_sig(double x) {
    // printf's "%.6g", by the standard's definition of to_chars with a precision (the same
    // characters, NaN and infinities included), without printf's locale and format parsing
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 6);
    return std::string(buf, res.ptr);
}

}  // namespace memcap
