// memcap/harness/results/csv.cpp — see csv.hpp.
#include "harness/results/csv.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"

#include <cmath>
#include <cstdio>
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
        {"message", "why the cell failed (status error)"},
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

std::string cell_rows(const CellResult& r) {
    CsvRecord lead(cell_columns());
    lead.set("memory", memory_name(r.memory_spec)).set("memory_spec", r.memory_spec).set("task_spec", r.task_spec).set("readout", r.readout);
    lead.set("budget_floats", r.budget_floats ? std::to_string(*r.budget_floats) : std::string());
    lead.set("d", std::to_string(r.d)).set("n", std::to_string(r.n)).set("seed", std::to_string(r.seed));
    lead.set("tuned", r.tuned);
    if (!r.ok) return CsvRecord(lead).set("status", "error").set("message", r.message).line();

    lead.set("state_floats", std::to_string(r.state_floats)).set("param_floats", std::to_string(r.param_floats));
    lead.set("state_bits", std::to_string(r.state_bits));
    lead.set("chance_frac", format_real(r.chance_frac)).set("status", "ok");
    std::string out;
    for (const auto& s : r.slots) {
        const double q = static_cast<double>(s.queries);
        CsvRecord row(lead);
        row.set("slot", s.slot < 0 ? std::string() : std::to_string(s.slot));
        row.set("queries", std::to_string(s.queries)).set("correct", std::to_string(s.correct));
        row.set("accuracy_frac", format_real(static_cast<double>(s.correct) / q));
        row.set("target_dist_mean", std::isnan(s.target_dist_sum) ? std::string() : format_sig(s.target_dist_sum / q));
        row.set("target_cos_mean", std::isnan(s.target_cos_sum) ? std::string() : format_sig(s.target_cos_sum / q));
        if (r.abstention) {
            const Abstention& a = *r.abstention;
            const auto rate = [](double x) { return std::isnan(x) ? std::string() : format_sig(x); };
            row.set("absent_queries", std::to_string(a.absent)).set("threshold", format_sig(a.threshold));
            row.set("false_accept_frac", rate(a.false_accept)).set("present_accept_frac", rate(a.present_accept));
            row.set("balanced_accuracy_frac", rate(a.balanced)).set("auc_frac", rate(a.auc));
        }
        out += row.line();
    }
    return out;
}

std::string memory_name(const std::string& memory_spec) {
    return memory_spec.substr(0, memory_spec.find(':'));
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (char ch : text) {
        if (ch == '"') out += '"';
        out += (ch == '\n' || ch == '\r') ? ' ' : ch;
    }
    out += '"';
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
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

}  // namespace memcap
