// memcap/harness/results/csv.hpp — the column tables of memcap's CSV files, and CSV text.
//
// Every CSV memcap writes has one column table here: the per-cell results
// (`run`, `sweep`, `reproduce_cells.csv`) and the summary over seeds
// (`aggregate`). Writers fill a CsvRecord by column name; readers look columns
// up by name (CsvColumns), so the order is said once.
#pragma once

#include "harness/results/cell_result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace memcap {

struct Column {
    const char* name;
    const char* meaning;  // one line, as in docs/cli.md's column table
    /// True for a column that only some tasks fill (chained and absent queries): readers
    /// (CsvColumns) do not require it, so files written before it was added still read.
    bool optional = false;
};

/// Columns of the per-cell results CSV, in file order.
const std::vector<Column>& cell_columns();
/// Columns of `memcap aggregate`'s summary CSV, in file order.
const std::vector<Column>& summary_columns();

/// The header line of a table: names joined by commas, ending in '\n'.
std::string header_line(const std::vector<Column>& columns);
/// The results CSV's header line (header_line(cell_columns())).
const std::string& cell_header();

/// One CSV line built by column name; unset columns stay empty.
class CsvRecord {
public:
    explicit CsvRecord(const std::vector<Column>& columns) : columns_(&columns), fields_(columns.size()) {}
    /// Sets a column (quoted on output when needed); std::logic_error for an unknown name.
    CsvRecord& set(std::string_view column, std::string value);
    /// The fields joined by commas, ending in '\n'.
    std::string line() const;

private:
    const std::vector<Column>* columns_;
    std::vector<std::string> fields_;
    std::size_t next_ = 0;  // where the next name is looked for first: after the column set last
};

/// Column positions of a CSV file by name, from its header line.
class CsvColumns {
public:
    /// UsageError naming `file` and the first column of `required` that the header lacks.
    CsvColumns(const std::string& header, const std::vector<Column>& required, const std::string& file);
    std::size_t operator[](std::string_view column) const;
    std::size_t count() const { return names_.size(); }

private:
    std::vector<std::string> names_;
};

/// The CSV lines of one cell: one per slot, or one error line (measurement columns empty).
std::string cell_rows(const CellResult& result);

/// The memory's name: its canonical spec string without the parameters (the CSVs' `memory` column).
std::string memory_name(const std::string& memory_spec);
/// Quotes a CSV field when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);
/// Splits one CSV line (no trailing newline) into fields, undoing csv_field's quoting.
std::vector<std::string> split_csv_line(const std::string& line);
/// A measured real with 6 significant digits (printf %.6g), the form of every measured column.
std::string format_sig(double x);

}  // namespace memcap
